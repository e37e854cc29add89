import { afterEach, describe, expect, it } from 'vitest';
import { corpusFile, verdictLine, usePods } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);

describe('interlock validate in a real pod namespace, unprivileged, no capabilities', () => {
  for (const backend of ['nft', 'legacy'] as const) {
    it(`passes on Linkerd's CNI ruleset applied with iptables-${backend}`, async () => {
      const ns = pod();
      ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), backend);
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s']);
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^Intercepted: IPv4 connection to (?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:20001 was intercepted into port 4140/,
      );
      expect(run.summary?.verdict).toBe('pass');
    });

    it(`passes on Istio's CNI ruleset applied with iptables-${backend}`, async () => {
      const ns = pod();
      ns.applyRules(corpusFile('istio-cni/basic', 'iptables-nft-save.v4.txt'), backend);
      const run = await ns.runInterlock(['--mesh', 'istio', '--timeout', '5s']);
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(verdictLine(run.terminationMessage)).toMatch(/^Intercepted: IPv4 connection .* into port 15001/);
    });
  }

  it('fails with InterceptionMissing and the mesh exit code when the nat table is empty', async () => {
    const ns = pod();
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s']);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv4 connection to (?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:20001 was not redirected to port 4140/,
    );
  });
});

describe('the npm package bin (plain modules) behaves like the snapshot the image runs', () => {
  it('passes on Linkerd rules and fails without them, with the same reasons', async () => {
    const ns = pod();
    const unmeshed = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '4s'], { launcher: 'modules' });
    expect(unmeshed.exitCode).toBe(95);
    expect(verdictLine(unmeshed.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv4 connection to (?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:20001/,
    );
    ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'nft');
    const meshed = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '4s'], { launcher: 'modules' });
    expect(meshed.exitCode, meshed.stdout).toBe(0);
    expect(verdictLine(meshed.terminationMessage)).toMatch(/^Intercepted: /);
  });
});
