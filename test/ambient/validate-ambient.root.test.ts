import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ambientGolden, goldenHostProbes, HEAD_TAG } from '../harness/ambient-goldens.js';
import { applyAmbientRules, startZtunnel, type AmbientRulesOptions } from '../harness/ambient-rules.js';
import { usePods, verdictLine, type InterlockRun, type PodNamespace } from '../harness/pod-namespace.js';

// Istio ambient pods in real namespaces: istio-cni's rules from its own goldens, the ztunnel
// stand-in's listeners, the validator as an unprivileged uid, with and without CAP_NET_ADMIN.
// Every uncaptured probe dies in the sink namespace (ICMP unreachable), never leaves the machine.
const pod = usePods(afterEach);
const children: ChildProcess[] = [];
afterEach(() => {
  while (children.length) children.pop()?.kill();
});

const ISTIO_FAILURE = 126;
const DOC4 = String.raw`(?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d+:\d+`;
const DOC6 = String.raw`\[2001:db8:[0-9a-f:]+\]:\d+`;
/** A rule line that redirects to one of ztunnel's ports (iptables or nft spelling). */
const redirectsTo = (port: number) => (rule: string) =>
  new RegExp(`(?:--to-ports? |redirect to :)${port}\\b`).test(rule);

async function ztunnel(ns: PodNamespace, family: 'dual' | 'ipv4' = 'dual'): Promise<void> {
  children.push(await startZtunnel(ns, { family }));
}

/** A bounded listener that accepts and holds connections (a stranger), never connecting anywhere. */
const LISTENER = (port: number): string =>
  `import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(("0.0.0.0",${port}))\ns.listen(64)\ns.settimeout(1)\nc=[]\nend=time.time()+60\nwhile time.time()<end and len(c)<256:\n  try: c.append(s.accept()[0])\n  except OSError: pass`;

/** The goldens' own host-probe addresses, as an operator of those rules would configure them. */
function hostProbesOf(rules: AmbientRulesOptions): string[] {
  const ipv6 = rules.families?.includes('ipv6') === true;
  const dir = rules.backend === 'nft' ? 'nftables' : 'iptables';
  const golden = ambientGolden(rules.tag ?? HEAD_TAG, dir, rules.name ?? (ipv6 ? 'default_ipv6' : 'default'));
  return ['--host-probe-addresses', goldenHostProbes(golden).join(',')];
}

const headline = (run: InterlockRun): string => verdictLine(run.terminationMessage);
const why = (run: InterlockRun): string => `${run.terminationMessage}\n${run.stderr}`;
/** The rules check's line of the summary, when the test needs it. */
const rulesCheckOf = (run: InterlockRun) =>
  (run.summary?.checks as Array<{ name: string; status: string; reason?: string; message: string }> | undefined)?.find(
    (check) => check.name === 'rules',
  );

for (const caps of [false, true]) {
  const as = caps ? 'with CAP_NET_ADMIN' : 'without capabilities';
  const validate = (ns: PodNamespace, timeout = '3s', extra: readonly string[] = []) =>
    ns.runInterlock(['--mesh', 'istio-ambient', '--timeout', timeout, ...extra], { caps });
  /** With the capability the rules check reads the rules too, and a wrong ruleset fails it first. */
  const missingRules = (probeReason: string): RegExp => (caps ? /^RulesMismatch: / : new RegExp(`^${probeReason}: `));
  /**
   * No istio rules at all: with the capability the check finds no capture rules in nf_tables and
   * cannot list legacy tables as uid 65534, so it says so and the probe alone decides.
   */
  const probeDecides = (run: InterlockRun): void => {
    if (caps) expect(rulesCheckOf(run)).toMatchObject({ status: 'not-inspected', reason: 'RulesNotInspected' });
  };

  describe(`istio-ambient, captured, ${as}`, () => {
    const captured: Array<
      [string, { ipv4?: boolean; ipv6?: boolean }, AmbientRulesOptions, 'dual' | 'ipv4', string[]]
    > = [
      ['iptables-nft, IPv4, ztunnel on [::]', {}, { backend: 'iptables-nft' }, 'dual', ['ipv4']],
      ['iptables-legacy, IPv4, ztunnel on 0.0.0.0', {}, { backend: 'iptables-legacy' }, 'ipv4', ['ipv4']],
      ['nftables, IPv4', {}, { backend: 'nft' }, 'dual', ['ipv4']],
      [
        'iptables-nft, IPv6 only',
        { ipv4: false, ipv6: true },
        { families: ['ipv6'], name: 'default_ipv6' },
        'dual',
        ['ipv6'],
      ],
      [
        'nftables, dual-stack',
        { ipv6: true },
        { backend: 'nft', families: ['ipv4', 'ipv6'] },
        'dual',
        ['ipv4', 'ipv6'],
      ],
      [
        'iptables-nft, dual-stack, 1.25.0',
        { ipv6: true },
        { tag: '1.25.0', families: ['ipv4', 'ipv6'] },
        'dual',
        ['ipv4', 'ipv6'],
      ],
    ];
    for (const [name, shape, rules, family, families] of captured) {
      it(`${name}: exit 0, the accepted socket named`, async () => {
        const ns = pod(shape);
        applyAmbientRules(ns, rules);
        await ztunnel(ns, family);
        const run = await validate(ns, '3s', hostProbesOf(rules));
        expect(run.exitCode, why(run)).toBe(0);
        const first = families[0] === 'ipv4' ? `IPv4 connection to ${DOC4}` : `IPv6 connection to ${DOC6}`;
        const local = families[0] === 'ipv4' ? String.raw`127\.0\.0\.1` : '::1';
        expect(headline(run)).toMatch(
          new RegExp(
            `^Intercepted: ${first} was redirected in the pod to the listener on ztunnel's port 15001 \\(accepted on ${local}:15001 from the probe socket \\S+, the only socket on that address and port; 15001, 15006 and 15008 listen\\), captured at once.*; this assumes no other process in the pod's network namespace \\(the socket tables name no program: the listener is not proven to be ztunnel\\)$`,
          ),
        );
        const checks = run.summary?.checks as Array<{ name: string; status: string }>;
        for (const probed of families)
          expect(checks.find((check) => check.name === `probe-${probed}`)?.status).toBe('passed');
      });
    }

    it('rules arriving 2 s after the start: exit 0, the wait in the verdict', async () => {
      const ns = pod();
      await ztunnel(ns);
      const running = validate(ns, '8s');
      await new Promise((resolve) => setTimeout(resolve, 2000));
      applyAmbientRules(ns);
      const run = await running;
      expect(run.exitCode, why(run)).toBe(0);
      const waited = /captured after (\d+(?:\.\d)?)s, attempt (\d+): it was not captured at first/.exec(headline(run));
      expect(waited, headline(run)).not.toBeNull();
      expect(Number(waited?.[1])).toBeGreaterThanOrEqual(1.5);
      expect(Number(waited?.[2])).toBeGreaterThan(1);
    });
  });

  describe(`istio-ambient, not captured, ${as}`, () => {
    it(`no rules, no ztunnel: ${ISTIO_FAILURE}, the probe left the pod`, async () => {
      const ns = pod();
      const run = await validate(ns);
      expect(run.exitCode, why(run)).toBe(ISTIO_FAILURE);
      probeDecides(run);
      expect(headline(run)).toMatch(
        /: (?:it left the pod uncaptured and the network answered: host unreachable|no answer in [^:]+: it left the pod uncaptured)/,
      );
    });

    const partial: Array<[string, (rule: string) => boolean]> = [
      ['only the inbound rules', (rule) => !redirectsTo(15001)(rule) && !redirectsTo(15053)(rule)],
      ['only the DNS rules', (rule) => !redirectsTo(15001)(rule) && !redirectsTo(15006)(rule)],
    ];
    for (const [name, keep] of partial) {
      it(`${name}, ztunnel listening: ${ISTIO_FAILURE}, not captured`, async () => {
        const ns = pod();
        applyAmbientRules(ns, { keep });
        await ztunnel(ns);
        const run = await validate(ns);
        expect(run.exitCode, why(run)).toBe(ISTIO_FAILURE);
        expect(headline(run)).toMatch(missingRules('AmbientNotCaptured'));
      });
    }

    it(`listeners but no rules: ${ISTIO_FAILURE}, the probe left the pod`, async () => {
      const ns = pod();
      await ztunnel(ns);
      const run = await validate(ns);
      expect(run.exitCode, why(run)).toBe(ISTIO_FAILURE);
      probeDecides(run);
      expect(headline(run)).toMatch(
        /^AmbientNotCaptured: IPv4 connection to .* not seen arriving at ztunnel's port 15001 .*: it left the pod uncaptured/,
      );
    });

    it(`rules but ztunnel not listening: ${ISTIO_FAILURE}, redirected and refused`, async () => {
      const ns = pod();
      applyAmbientRules(ns);
      const run = await validate(ns);
      expect(run.exitCode, why(run)).toBe(ISTIO_FAILURE);
      expect(headline(run)).toMatch(
        /^ZtunnelNotListening: .*it was refused and nothing in the pod listens on port 15001: .*nothing listens on ports 15001, 15006, 15008/,
      );
    });

    it(`rules, ztunnel without 15008: ${ISTIO_FAILURE}, naming 15008`, async () => {
      const ns = pod();
      applyAmbientRules(ns);
      children.push(await startZtunnel(ns, { ports: [15001, 15006, 15053] }));
      const run = await validate(ns);
      expect(run.exitCode, why(run)).toBe(ISTIO_FAILURE);
      expect(headline(run)).toMatch(/^ZtunnelNotListening: .*it reached port 15001, but nothing listens on port 15008/);
    });

    it(`a stranger listening on 15001 without the redirect: ${ISTIO_FAILURE}, never a pass`, async () => {
      const ns = pod();
      // Not ztunnel: an unmarked listener on 15001 alone, and no rule sends anything to it.
      children.push(ns.spawnInPod(['/usr/bin/python3', '-c', LISTENER(15001)]));
      await ns.untilListening('pod', 15001);
      const run = await validate(ns);
      expect(run.exitCode, why(run)).toBe(ISTIO_FAILURE);
      probeDecides(run);
      expect(headline(run)).toMatch(
        /^AmbientNotCaptured: .*it left the pod uncaptured.*; and nothing listens on ports 15006, 15008/,
      );
    });

    it(`a peer outside the pod that accepts everything, ztunnel listening, no rules: ${ISTIO_FAILURE}, not theirs`, async () => {
      const ns = pod();
      await ztunnel(ns);
      // The sink answers every TCP connection itself (a relay or a transparent proxy beyond the pod).
      ns.execSink(
        'nft',
        'add table ip relay; add chain ip relay pre { type nat hook prerouting priority -100; }; add rule ip relay pre tcp dport != 0 redirect to :9999',
      );
      children.push(ns.spawnInSink(['/usr/bin/python3', '-c', LISTENER(9999)]));
      await ns.untilListening('sink', 9999);
      const run = await validate(ns);
      expect(run.exitCode, why(run)).toBe(ISTIO_FAILURE);
      probeDecides(run);
      expect(headline(run)).toMatch(
        /^ZtunnelArrivalUnseen: .*something accepted it, but the pod's socket tables hold no connection on port 15001 from the probe socket/,
      );
    });
  });
}
