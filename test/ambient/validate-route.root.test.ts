import { afterEach, describe, expect, it } from 'vitest';
import { usePods, verdictLine, type PodNamespace } from '../harness/pod-namespace.js';
import { ambientGoldens, loadIptablesGolden } from './goldens.js';

/**
 * validate --mesh istio-ambient with CAP_NET_ADMIN: the rules check covers the ambient rules and
 * the policy route they rely on, read through rtnetlink (istio-cni's ip rule and table 100).
 */
const pod = usePods(afterEach);
const GOLDEN = ambientGoldens().find(
  (golden) => golden.tag === '1.29.0' && golden.backend === 'iptables' && golden.name === 'default',
);

type Check = { name: string; status: string; reason?: string; message: string };
const checksOf = (summary: Record<string, unknown> | undefined): Check[] => (summary?.checks as Check[]) ?? [];

function ambientPod(route: { rule: boolean; local: boolean }): PodNamespace {
  const ns = pod();
  if (!GOLDEN) throw new Error('no 1.29.0 default golden');
  loadIptablesGolden(ns.pod, GOLDEN, 'nft');
  if (route.rule) ns.exec('ip', 'rule', 'add', 'fwmark', '0x111/0xfff', 'pref', '32764', 'lookup', '100');
  if (route.local) ns.exec('ip', 'route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '100');
  return ns;
}

const run = (ns: PodNamespace) =>
  ns.runInterlock(['--mesh', 'istio-ambient', '--family', 'ipv4', '--timeout', '5s'], { caps: true });

describe('the ambient rules check reads the ip rule and table 100', () => {
  it('istio-cni 1.29 rules with the ip rule and the local route: the rules check passes and says so', async () => {
    const result = await run(ambientPod({ rule: true, local: true }));
    const rules = checksOf(result.summary).find((check) => check.name === 'rules');
    expect(rules?.status, result.stdout).toBe('passed');
  });

  it('the ip rule missing: MarkRouteMissing naming the rule, Istio’s exit code', async () => {
    const result = await run(ambientPod({ rule: false, local: true }));
    expect(result.exitCode, result.stdout).toBe(126);
    expect(verdictLine(result.terminationMessage)).toMatch(
      /^MarkRouteMissing: .*IPv4: no ip rule `fwmark 0x111\/0xfff lookup 100`/,
    );
  });

  it('table 100 without its local route: MarkRouteMissing naming the route', async () => {
    const result = await run(ambientPod({ rule: true, local: false }));
    expect(result.exitCode, result.stdout).toBe(126);
    expect(verdictLine(result.terminationMessage)).toMatch(/table 100 has no route `local 0\.0\.0\.0\/0 dev lo`/);
  });
});
