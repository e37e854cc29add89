import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { corpusFile, verdictLine, usePods } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);

const LINKERD = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');
const ISTIO = readFileSync(corpusFile('istio-cni/basic', 'iptables-nft-save.v4.txt'), 'utf8');
const WITHOUT_INBOUND_REDIRECT = LINKERD.replace(
  /^-A PROXY_INIT_REDIRECT -p tcp -m comment --comment "proxy-init\/redirect-all-incoming-to-proxy-port" -j REDIRECT --to-ports 4143\n/m,
  '',
);
const WITHOUT_PROXY_UID_EXCLUSION = LINKERD.replace(/^-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 .*\n/m, '');

type Check = { name: string; status: string; reason?: string; message: string };
const checksOf = (summary: Record<string, unknown> | undefined): Check[] => (summary?.checks as Check[]) ?? [];

describe('validate with CAP_NET_ADMIN and CAP_NET_RAW reads and checks the rules', () => {
  it('the mutations really change the ruleset', () => {
    expect(WITHOUT_INBOUND_REDIRECT).not.toBe(LINKERD);
    expect(WITHOUT_PROXY_UID_EXCLUSION).not.toBe(LINKERD);
  });

  it('correct Linkerd rules (iptables-nft): the rules check passes beside the probe', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s'], { caps: true });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(checksOf(run.summary).find((check) => check.name === 'rules')?.status).toBe('passed');
  });

  it('correct Linkerd rules (iptables-legacy) as uid 65534: legacy cannot be listed, so the rules are not inspected and the probe decides', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'legacy');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s'], { caps: true });
    expect(run.exitCode, run.stdout).toBe(0);
    const rules = checksOf(run.summary).find((check) => check.name === 'rules');
    expect(rules?.status, run.stdout).toBe('not-inspected');
    expect(rules?.message).toMatch(
      /legacy iptables tables cannot be listed by uid 65534 without root: \/proc\/net\/ip_tables_names is root-only/,
    );
    expect(rules?.message).toMatch(/nf_tables holds no capture rules/);
    expect(rules?.message).toMatch(/run the validator as root \(uid 0\) with CAP_NET_ADMIN/);
    expect(checksOf(run.summary).find((check) => check.name === 'probe-ipv4')?.status).toBe('passed');
  });

  it('correct Linkerd rules (iptables-legacy) with --rules required as uid 65534: RulesUnreadable naming the legacy backend', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'legacy');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--rules', 'required'], { caps: true });
    expect(run.exitCode, run.stdout).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^RulesUnreadable: .*legacy iptables tables cannot be listed by uid 65534/,
    );
  });

  it('correct Linkerd rules (iptables-legacy) as uid 0: the legacy rules are read and the rules check passes', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'legacy');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s'], { uid: 0, caps: true });
    expect(run.exitCode, run.stdout).toBe(0);
    const rules = checksOf(run.summary).find((check) => check.name === 'rules');
    expect(rules?.status, run.stdout).toBe('passed');
    expect(rules?.message).toMatch(/\(iptables-legacy\)$/);
  });

  it('legacy outbound REDIRECT to the wrong port as uid 0: the rules engine names port 4141', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD.replace('--to-ports 4140', '--to-ports 4141'), 'legacy');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s'], { uid: 0, caps: true });
    expect(run.exitCode, run.stdout).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^RulesMismatch: .*4141/);
  });

  it('correct Istio rules: passes with the rules checked', async () => {
    const ns = pod();
    ns.applyRulesText(ISTIO, 'nft');
    const run = await ns.runInterlock(['--mesh', 'istio', '--timeout', '5s'], { caps: true });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(checksOf(run.summary).find((check) => check.name === 'rules')?.status).toBe('passed');
  });

  it('inbound REDIRECT missing: the probe alone passes, the rules engine fails it and names the chain', async () => {
    const ns = pod();
    ns.applyRulesText(WITHOUT_INBOUND_REDIRECT, 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s'], { caps: true });
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^RulesMismatch: inbound TCP .* is not redirected .*nat PREROUTING.*expected redirected to local port 4143/,
    );
    expect(checksOf(run.summary).find((check) => check.name === 'probe-ipv4')?.status).toBe('passed');
  });

  it('proxy-uid exclusion missing (the proxy would loop): fails naming uid 2102', async () => {
    const ns = pod();
    ns.applyRulesText(WITHOUT_PROXY_UID_EXCLUSION, 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s'], { caps: true });
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^RulesMismatch: .*uid 2102.*REDIRECT --to-ports 4140/);
  });

  it('outbound REDIRECT to the wrong port: the rules engine names the rule and the port', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD.replace('--to-ports 4140', '--to-ports 4141'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s'], { caps: true });
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^RulesMismatch: .*4141/);
  });

  it('a ruleset split across the legacy and nft backends is reported', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'nft');
    ns.applyRulesText(LINKERD, 'legacy');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--log-level', 'info'], { caps: true });
    expect(run.stdout).toMatch(/iptables-legacy/);
    expect(run.stdout).toMatch(/iptables-nft/);
  });
});

describe('without capabilities the probe still decides', () => {
  it('inbound REDIRECT missing passes on the probe, and the summary says the rules were not inspected', async () => {
    const ns = pod();
    ns.applyRulesText(WITHOUT_INBOUND_REDIRECT, 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s']);
    expect(run.exitCode, run.stdout).toBe(0);
    const rules = checksOf(run.summary).find((check) => check.name === 'rules');
    expect(rules?.status).toBe('not-inspected');
    expect(rules?.message).toMatch(/not inspected.*CAP_NET_ADMIN/);
  });

  it('--rules required without the capability fails with its own reason', async () => {
    const ns = pod();
    ns.applyRulesText(LINKERD, 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--rules', 'required']);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^RulesUnreadable: /);
  });
});
