import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { corpusFile, verdictLine, usePods } from '../harness/pod-namespace.js';

// Without capabilities the probe is the only check: a ruleset that spares one popular port, or
// every port but the probe's usual one, must not pass on a single sample port.
const pod = usePods(afterEach);
const LINKERD = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');

function withFirstRule(rule: string): string {
  const mutated = LINKERD.replace(/^(-A PROXY_INIT_OUTPUT )/m, `-A PROXY_INIT_OUTPUT ${rule}\n$1`);
  expect(mutated).not.toBe(LINKERD);
  return mutated;
}

describe('a probe spread over ports when every exclusion is known, uid 65534, no capabilities', () => {
  it('a RETURN for port 443 first in PROXY_INIT_OUTPUT fails, naming port 443', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(withFirstRule('-p tcp -m tcp --dport 443 -j RETURN'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--exclude-outbound-ports=']);
    expect(run.exitCode, run.stdout).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv4 connection to (?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:443 was not redirected to port 4140/,
    );
  });

  it('a RETURN for every port above 1024 but 20001 fails on the random port', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(withFirstRule('-p tcp -m multiport --dports 1025:20000,20002:65535 -j RETURN'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--exclude-outbound-ports=']);
    expect(run.exitCode, run.stdout).toBe(95);
    const notes = run.logs.find((line) => line.msg === 'probing interception')?.notes as string[];
    const random = notes.join('\n').match(/random port (\d+)/)?.[1];
    expect(verdictLine(run.terminationMessage)).toMatch(
      new RegExp(
        `^InterceptionMissing: IPv4 connection to (?:192\\.0\\.2|198\\.51\\.100|203\\.0\\.113)\\.\\d+:${random} was not redirected`,
      ),
    );
  });

  it('a port of --include-outbound-ports that the rules spare fails, naming it', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(withFirstRule('-p tcp -m tcp --dport 8443 -j RETURN'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--include-outbound-ports', '8443']);
    expect(run.exitCode, run.stdout).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv4 connection to (?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:8443 was not redirected/,
    );
  });

  it('the whole spread passes under the real ruleset, every port intercepted', async () => {
    const ns = pod({ sink: 'reject', ipv6: true });
    ns.applyRulesText(LINKERD, 'nft', 'ipv4');
    ns.applyRulesText(LINKERD, 'nft', 'ipv6');
    const run = await ns.runInterlock([
      '--mesh',
      'linkerd',
      '--timeout',
      '5s',
      '--include-outbound-ports',
      '8443',
      '--exclude-outbound-ports=',
    ]);
    expect(run.exitCode, run.stdout).toBe(0);
    const checks = run.summary?.checks as Array<{ name: string; message: string }>;
    for (const name of ['probe-ipv4', 'probe-ipv6']) {
      expect(checks.find((check) => check.name === name)?.message).toMatch(
        /:20001 was intercepted into port 4140 .*; ports 80, 443, \d+, 8443 too$/,
      );
    }
  });
});

describe('unknown exclusions: never probe a port the pod may legitimately skip', () => {
  // linkerd-cni skips 443 and 6443 for control-plane pods; users skip 443, 3306, 5432 by annotation.
  const skipped = withFirstRule('-p tcp -m multiport --dports 443,3306,5432,6443 -j RETURN');

  it("Linkerd's argv carries no skip ports: a pod that skips 443 passes, proven on the connect port", async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(skipped, 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s']);
    expect(run.exitCode, run.stdout).toBe(0);
    const notes = run.logs.find((line) => line.msg === 'probing interception')?.notes as string[];
    expect(notes).toContain('IPv4: ports 20001');
  });

  it('the same pod still fails when its connect port is not captured', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(withFirstRule('-p tcp -m tcp --dport 20001 -j RETURN'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s']);
    expect(run.exitCode, run.stdout).toBe(95);
  });

  it('with the exclusions read from the pod, the spread skips exactly them and still catches 80', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(withFirstRule('-p tcp -m multiport --dports 80,443 -j RETURN'), 'nft');
    const annotations = `${ns.tmp}/annotations`;
    const labels = `${ns.tmp}/labels`;
    writeFileSync(annotations, 'config.linkerd.io/skip-outbound-ports="443"\n');
    writeFileSync(labels, 'app="web"\n');
    const run = await ns.runInterlock([
      '--mesh',
      'linkerd',
      '--timeout',
      '5s',
      '--pod-annotations',
      annotations,
      '--pod-labels',
      labels,
    ]);
    expect(run.exitCode, run.stdout).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv4 connection to [0-9.]+:80 was not redirected/,
    );
  });
});
