// The commit and build time `interlock version` reports, for every build: the compiled modules
// (scripts/stamp-build.mjs), the start-up snapshot (scripts/build-snapshot.mjs) and the image
// (image/Dockerfile passes INTERLOCK_COMMIT and INTERLOCK_BUILD_DATE, having no .git to read).
import { spawnSync } from 'node:child_process';

/** { commit, date }: INTERLOCK_COMMIT, else `git rev-parse HEAD`; INTERLOCK_BUILD_DATE, else now. */
export function buildInfo(root) {
  const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
  const commit = process.env.INTERLOCK_COMMIT || (git.status === 0 ? git.stdout.trim() : '') || 'unknown';
  const date = process.env.INTERLOCK_BUILD_DATE || new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { commit, date };
}

/** The module text of src/cli/build-info.ts with the values filled in (valid TypeScript and JavaScript). */
export function buildInfoModule(info) {
  return `export const BUILD_INFO = ${JSON.stringify(info)};\n`;
}
