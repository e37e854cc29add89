import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../harness/pod-namespace.js';

const RUN_CLI = join(REPO_ROOT, 'dist/cli/run-cli.js');

function node(script: string) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
}

// A bug exits 70 with one line: never a raw stack, never 1 (which --failure-exit-code may not use).
describe('crashes', () => {
  it('crashCli: exit 70, one line, no stack', () => {
    const run = node(
      `import { crashCli } from ${JSON.stringify(RUN_CLI)}; crashCli(new RangeError('Maximum call stack size exceeded'));`,
    );
    expect(run.status).toBe(70);
    expect(run.stderr).toBe('interlock: InternalError: RangeError: Maximum call stack size exceeded\n');
  });

  it('an uncaught exception after runCli started: exit 70, one line, no stack', () => {
    const run = node(
      `import { runCli } from ${JSON.stringify(RUN_CLI)}; await runCli(['--version']); setTimeout(() => { throw new TypeError('boom\\u202e'); }, 1);`,
    );
    expect(run.status).toBe(70);
    expect(run.stderr).toBe('interlock: InternalError: TypeError: boom\\u{202e}\n');
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });

  it('an unhandled rejection: exit 70 as well', () => {
    const run = node(
      `import { runCli } from ${JSON.stringify(RUN_CLI)}; await runCli(['--version']); Promise.reject(new Error('late'));`,
    );
    expect(run.status).toBe(70);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
