import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const parent = mkdtempSync(path.join(tmpdir(), 'interlock-0700-'));
const checkout = path.join(parent, 'p');

/** A checkout of the tracked files (as they are in the working tree) and nothing else: no node_modules, no dist/. */
function copyTrackedFiles(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f.length > 0);
  for (const file of files) {
    const from = path.join(root, file);
    if (!existsSync(from)) continue;
    mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
    cpSync(from, path.join(to, file));
  }
}

/** Whether uid 65534 (what the validator runs as) can read a file. */
function nobodyCanRead(file: string): boolean {
  const run = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', file], {
    stdio: 'ignore',
  });
  return run.status === 0;
}

// The demo's npm install leaves a full node_modules; removing it on a loaded machine outlasts the
// default hook timeout.
afterAll(() => rmSync(parent, { recursive: true, force: true }), 600_000);

describe('a checkout in a 0700 directory, with nothing beside it', () => {
  it('runs `npm run demo`: exit 0 once meshed, then 95 with the reason', () => {
    copyTrackedFiles(checkout);
    expect(statSync(parent).mode & 0o777).toBe(0o700);
    expect(readdirSync(parent)).toEqual(['p']);
    // The premise: the validator's uid cannot read anything in the checkout.
    expect(nobodyCanRead(path.join(checkout, 'package.json'))).toBe(false);
    expect(nobodyCanRead('/etc/hostname')).toBe(true);

    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith('npm_') && !key.startsWith('INTERLOCK_')),
    );
    const demo = spawnSync('npm', ['run', 'demo'], {
      cwd: checkout,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    });
    const output = `${demo.stdout}\n${demo.stderr}`;
    expect(demo.status, output).toBe(0);
    const codes = [...demo.stdout.matchAll(/^exit code: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(codes, output).toEqual([0, 95]);
    expect(demo.stdout).toMatch(/^\s+Intercepted: /m);
    expect(demo.stdout).toMatch(/^\s+InterceptionMissing: /m);
    expect(demo.stdout).not.toContain('Cannot find module');
  }, 900_000);
});
