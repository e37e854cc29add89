// Stages what another uid runs (the validator as 65534 or 1337) in a world-readable temporary
// directory: the built dist/ (the plain modules, the npm bin and the start-up snapshot with its
// netlink addon), the production node_modules the modules load, and the package.json that makes
// dist/ ESM. A checkout in a 0700 directory (/root, any `mktemp -d`) is unreadable to those uids.
//
//   node scripts/stage-runtime.mjs        prints the staged directory; the caller removes it
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** node_modules paths of the production dependency tree, parents only (a parent copies its nested packages). */
function productionPackages() {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const all = Object.entries(lock.packages ?? {})
    .filter(([key, entry]) => key.startsWith('node_modules/') && entry.dev !== true)
    .map(([key]) => key)
    .sort();
  return all.filter((key) => !all.some((parent) => parent !== key && key.startsWith(`${parent}/node_modules/`)));
}

/** Every directory readable and searchable, every file readable, by any uid. */
function openUp(target) {
  const mode = statSync(target).mode;
  if (statSync(target).isDirectory()) {
    chmodSync(target, 0o755);
    for (const name of readdirSync(target)) openUp(path.join(target, name));
  } else {
    chmodSync(target, (mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
}

/** Copies the runtime into a new world-readable directory under the system's temp dir and returns it. */
export function stageRuntime() {
  const built = [
    'dist/cli/main.js',
    'dist/bin/interlock.cjs',
    'dist/snapshot/interlock.blob',
    'dist/snapshot/interlock.commands.cjs',
    'dist/snapshot/netlink.node',
  ];
  for (const file of built) {
    if (!existsSync(path.join(root, file))) throw new Error(`${file} is missing: run \`npm run build\` first`);
  }
  const stage = mkdtempSync(path.join(tmpdir(), 'interlock-stage-'));
  cpSync(path.join(root, 'dist'), path.join(stage, 'dist'), { recursive: true });
  for (const pkg of productionPackages()) {
    const from = path.join(root, pkg);
    if (existsSync(from)) cpSync(from, path.join(stage, pkg), { recursive: true, dereference: true });
  }
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify({ type: 'module', private: true })}\n`);
  openUp(stage);
  return stage;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(stageRuntime());
}
