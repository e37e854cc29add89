import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { corpusFile, usePods, verdictLine } from '../harness/pod-namespace.js';
import { runCommand } from './cli-run.js';

const pod = usePods(afterEach);

// Issue 7, item 10 (the command-line half): the last of two values must not win silently.
describe('a single-value flag given twice is a configuration error', () => {
  it('explain --iptables-save broken --iptables-save good exits 64, not 0 on the second file', async () => {
    const ns = pod();
    const broken = `${ns.tmp}/broken.txt`;
    writeFileSync(broken, '*nat\n-A OUTPUT -j NOWHERE --garbage\n');
    const good = corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt');
    const run = await runCommand(['explain', '--mesh', 'linkerd', '--iptables-save', broken, '--iptables-save', good]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(64);
    expect(run.stderr).toMatch(/--iptables-save=".*": given 2 times; give it once/);
  });

  it('validate --probe-port twice exits 64 with ConfigInvalid', async () => {
    const ns = pod();
    const run = await ns.runInterlock([
      '--mesh',
      'linkerd',
      '--timeout',
      '3s',
      '--probe-port',
      '20001',
      '--probe-port',
      '20002',
    ]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(64);
    expect(verdictLine(run.terminationMessage)).toMatch(/^ConfigInvalid: --probe-port/);
  });

  it('validate --mesh linkerd --mesh istio exits 64', async () => {
    const ns = pod();
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--mesh=istio', '--timeout', '3s']);
    expect(run.exitCode, run.stdout + run.stderr).toBe(64);
  });
});
