import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'interlock-image-script-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `npm run image` on a fresh machine: no engine answers `docker info`. The script is run from a
 * copy whose scripts/ensure-docker.sh is a stand-in recording that it ran, so nothing is installed.
 */
function runOnFreshMachine(): { status: number | null; stderr: string; ensured: boolean } {
  mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  mkdirSync(path.join(dir, 'bin'), { recursive: true });
  copyFileSync(path.join(root, 'scripts/image.sh'), path.join(dir, 'scripts/image.sh'));
  const marker = path.join(dir, 'ensured');
  writeFileSync(path.join(dir, 'scripts/ensure-docker.sh'), `touch '${marker}'\nexit 3\n`);
  writeFileSync(path.join(dir, 'bin/docker'), '#!/bin/sh\nexit 1\n');
  chmodSync(path.join(dir, 'bin/docker'), 0o755);
  const bash = execFileSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).trim();
  const run = spawnSync(bash, [path.join(dir, 'scripts/image.sh')], {
    encoding: 'utf8',
    env: { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin` },
    timeout: 20_000,
  });
  return { status: run.status, stderr: run.stderr, ensured: existsSync(marker) };
}

describe('npm run image installs what it needs', () => {
  it('starts the engine itself through scripts/ensure-docker.sh when none answers', () => {
    const run = runOnFreshMachine();
    expect(run.ensured).toBe(true);
    expect(run.stderr).not.toMatch(/run scripts\/ensure-docker\.sh first/);
    // The stand-in fails, so the script stops there with a sentence, not a docker error.
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/could not start one/);
  });
});
