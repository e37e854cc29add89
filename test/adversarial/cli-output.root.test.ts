import { closeSync, openSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { corpusFile, usePods, verdictLine } from '../harness/pod-namespace.js';
import { runCommand, STACK_LINE } from './cli-run.js';

const pod = usePods(afterEach);

/** An explain run whose JSON report is far over a pipe's 64 KiB (about 900 KB). */
function bigExplainArgs(): string[] {
  const uids = Array.from({ length: 300 }, (_, index) => 3000 + index).join(',');
  const interfaces = Array.from({ length: 100 }, (_, index) => `veth${index}`).join(',');
  return [
    'explain',
    '--mesh',
    'istio',
    '--iptables-save',
    corpusFile('istio-cni/basic', 'iptables-nft-save.v4.txt'),
    '--format',
    'json',
    '--proxy-uid',
    uids,
    '--exclude-interfaces',
    interfaces,
    '--reroute-interfaces',
    interfaces,
  ];
}

// Issue 7, item 7: the process must not exit before a piped stdout has drained.
describe('piped output arrives whole', () => {
  for (const launcher of ['modules', 'snapshot'] as const) {
    it(`explain's JSON report over 64 KiB reaches a pipe whole (${launcher})`, async () => {
      const ns = pod();
      const file = `${ns.tmp}/report.json`;
      const fd = openSync(file, 'w');
      const toFile = await runCommand(bigExplainArgs(), { stdoutFd: fd, launcher });
      closeSync(fd);
      const expected = readFileSync(file, 'utf8');
      expect(expected.length).toBeGreaterThan(256 * 1024);
      const piped = await runCommand(bigExplainArgs(), { launcher });
      expect(piped.exitCode).toBe(toFile.exitCode);
      expect(piped.stdout.length).toBe(expected.length);
      expect(() => JSON.parse(piped.stdout) as unknown).not.toThrow();
    });
  }
});

// Issue 7, item 8: an output error is exit 74 with one line and no stack; a failure code may not
// be one a crash or an output error produces.
describe('output errors exit 74 with one line on stderr', () => {
  it('explain > /dev/full', async () => {
    const fd = openSync('/dev/full', 'w');
    const run = await runCommand(bigExplainArgs(), { stdoutFd: fd });
    closeSync(fd);
    expect(run.exitCode, run.stderr).toBe(74);
    expect(run.stderr).not.toMatch(STACK_LINE);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a reader that closes the pipe', async () => {
    const run = await runCommand(bigExplainArgs(), { closeStdout: true });
    expect(run.exitCode, run.stderr).toBe(74);
    expect(run.stderr).not.toMatch(STACK_LINE);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('--failure-exit-code may not collide with a reserved code', () => {
  for (const code of ['1', '74', '0']) {
    it(`validate --failure-exit-code ${code} in a pod without rules is ConfigInvalid (64)`, async () => {
      const ns = pod();
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '3s', '--failure-exit-code', code]);
      expect(run.exitCode, run.stdout + run.stderr).toBe(64);
      expect(verdictLine(run.terminationMessage)).toMatch(/^ConfigInvalid: --failure-exit-code/);
    });
  }

  it('explain --failure-exit-code 1 is refused', async () => {
    const run = await runCommand([
      'explain',
      '--mesh',
      'linkerd',
      '--iptables-save',
      corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'),
      '--failure-exit-code',
      '1',
    ]);
    expect(run.exitCode).toBe(64);
  });
});
