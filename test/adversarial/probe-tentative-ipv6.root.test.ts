import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { corpusFile, verdictLine, usePods, type PodNamespace } from '../harness/pod-namespace.js';

// A dual-stack pod whose IPv6 address is still in duplicate address detection when the validator
// starts: auto mode must wait for the family and prove it, never pass on IPv4 alone.
const pod = usePods(afterEach);
const LINKERD = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');

/** Adds IPv6 WITH duplicate address detection (two probes, about 2 s tentative). */
function addTentativeIpv6(ns: PodNamespace): void {
  const sinkIf = ns.execSink('ip', '-o', 'link', 'show', 'type', 'veth').split(':')[1]?.trim().split('@')[0] ?? '';
  const gw6 = ns.ipv6Address.replace(/::2$/, '::1');
  ns.execSink('ip', 'addr', 'add', `${gw6}/64`, 'dev', sinkIf, 'nodad');
  ns.exec('sysctl', '-qw', 'net.ipv6.conf.eth0.accept_dad=1');
  ns.exec('sysctl', '-qw', 'net.ipv6.conf.eth0.dad_transmits=2');
  ns.exec('ip', 'addr', 'add', `${ns.ipv6Address}/64`, 'dev', 'eth0');
  ns.exec('ip', '-6', 'route', 'add', 'default', 'via', gw6, 'dev', 'eth0');
  // The test is only meaningful if the address really is tentative now.
  expect(ns.exec('ip', '-6', 'addr', 'show', 'dev', 'eth0', 'scope', 'global')).toMatch(/tentative/);
}

describe('a tentative IPv6 address in auto mode', () => {
  it('is waited for and fails when only IPv4 is intercepted', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(LINKERD, 'nft', 'ipv4');
    addTentativeIpv6(ns);
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '8s']);
    expect(run.exitCode, run.stdout).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv6 connection to \[2001:db8:[0-9a-f:]+\]:20001 was not redirected/,
    );
  });

  it('is waited for and proven when both families are intercepted', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(LINKERD, 'nft', 'ipv4');
    ns.applyRulesText(LINKERD, 'nft', 'ipv6');
    addTentativeIpv6(ns);
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '8s']);
    expect(run.exitCode, run.stdout).toBe(0);
    const checks = run.summary?.checks as Array<{ name: string; status: string }>;
    expect(
      checks.filter((check) => check.name.startsWith('probe-')).map((check) => `${check.name} ${check.status}`),
    ).toEqual(['probe-ipv4 passed', 'probe-ipv6 passed']);
  });
});
