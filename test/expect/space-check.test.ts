import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Family } from '../../src/addr/ip.js';
import { PRESETS, type InterceptionSpec } from '../../src/config/interception.js';
import type { SpaceCheckResult } from '../../src/expect/space-check.js';
import { verifyRuleset } from '../../src/expect/verify.js';
import { analyzeDumps, type Dump } from '../../src/rules-check/analyze.js';
import { describeOutcome } from '../../src/trace/outcome.js';
import { CORPUS, flagsFor, loadManifest } from '../explain/corpus.js';
import { specFromFlags } from '../harness/spec.js';

// What the check concludes from the pieces the tracer hands it: which answers meet which
// expectation, how findings are grouped, kept and counted, and the status they add up to.

const linkerd = readFileSync(`${CORPUS}/linkerd/cni-default/iptables-nft-save.v4.txt`, 'utf8');
const REDIRECT_IN =
  '-A PROXY_INIT_REDIRECT -p tcp -m comment --comment "proxy-init/redirect-all-incoming-to-proxy-port" -j REDIRECT --to-ports 4143';
const IGNORE_LOOPBACK = '-A PROXY_INIT_OUTPUT -o lo -m comment --comment "proxy-init/ignore-loopback" -j RETURN';
const IGNORE_INBOUND =
  '-A PROXY_INIT_REDIRECT -p tcp -m multiport --dports 4191,4190 -m comment --comment "proxy-init/ignore-port-4191,4190" -j RETURN';

function analyse(spec: InterceptionSpec, dumps: readonly Dump[], families: readonly Family[]): SpaceCheckResult {
  const analysis = analyzeDumps(spec, dumps, { families });
  if (analysis.kind !== 'checked') throw new Error('the dumps must parse');
  return analysis.check;
}

const dump = (text: string, family: Family = 'ipv4', source = 'linkerd'): Dump => ({
  backend: 'iptables-nft',
  family,
  source,
  text,
});

function corpusCase(dir: string, file = 'iptables-nft-save.v4.txt'): { spec: InterceptionSpec; text: string } {
  const testCase = loadManifest().find((c) => c.dir === dir);
  if (!testCase) throw new Error(`no case ${dir}`);
  return { spec: specFromFlags(flagsFor(testCase).argv), text: readFileSync(`${CORPUS}/${dir}/${file}`, 'utf8') };
}

describe("REDIRECT without a port keeps each packet's own port", () => {
  it('for every port, it is right only at the proxy port: the finding names all ports but that one', () => {
    const result = analyse(PRESETS.linkerd.spec, [dump(linkerd.replace(' --to-ports 4140', ''))], ['ipv4']);
    expect(result.status).toBe('failed');
    expect(result.findings.map((finding) => finding.message)).toEqual([
      'outbound TCP to any address but 127.0.0.0/8, any port but 4140, from any uid but 2102, via any interface but lo, is redirected to its own port on this host (rule 3 of nat PROXY_INIT_OUTPUT (iptables-nft, ip): `-A PROXY_INIT_OUTPUT -p tcp -m comment --comment "proxy-init/redirect-all-outgoing-to-proxy-port" -j REDIRECT`); expected redirected to local port 4140 because outbound TCP from the application is captured',
    ]);
  });

  it('for the proxy port alone, it is the right answer: the check passes', () => {
    const text = linkerd.replace(
      REDIRECT_IN,
      ['-A PROXY_INIT_REDIRECT -p tcp -m tcp --dport 4143 -j REDIRECT', REDIRECT_IN].join('\n'),
    );
    const result = analyse(PRESETS.linkerd.spec, [dump(text)], ['ipv4']);
    expect(result).toMatchObject({ status: 'passed', findings: [], omittedFindings: 0 });
    const app = result.answers.find((answer) => answer.expectation.id === 'ipv4/inbound/app');
    expect(app?.holds).toBe(true);
    expect(app?.outcomes.map((seen) => [seen.outcome, seen.decidedBy?.position])).toEqual([
      [{ kind: 'redirect', port: undefined }, 2],
      [{ kind: 'redirect', port: 4143 }, 3],
    ]);
  });
});

describe('what each expected answer accepts', () => {
  it("not-looped: the proxy's passthrough source sent to the outbound port loops, and fails", () => {
    const { spec, text } = corpusCase('istio/empty');
    expect(analyse(spec, [dump(text, 'ipv4', 'istio')], ['ipv4']).status).toBe('passed');
    // Without the passthrough RETURN and the other owners' loopback RETURNs, 127.0.0.6 over lo falls through to the outbound capture.
    const broken = text
      .replace('-A ISTIO_OUTPUT -s 127.0.0.6/32 -o lo -j RETURN\n', '')
      .replace('-A ISTIO_OUTPUT -o lo -m owner ! --uid-owner 1337 -j RETURN\n', '')
      .replace('-A ISTIO_OUTPUT -o lo -m owner ! --gid-owner 1337 -j RETURN\n', '')
      .replace(
        '-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n',
        '-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n-A ISTIO_OUTPUT -j ISTIO_REDIRECT\n',
      );
    const result = analyse(spec, [dump(broken, 'ipv4', 'istio')], ['ipv4']);
    const looped = result.findings.filter((finding) => finding.expectation.id === 'ipv4/outbound/passthrough-source');
    expect(looped.map((finding) => finding.message)).toEqual([
      "outbound TCP to any address but 127.0.0.1/32, any port, from any uid but 1337, any gid but 1337, via any interface but any other interface, from source 127.0.0.6/32, is redirected to local port 15001 (rule 1 of nat ISTIO_REDIRECT (iptables-nft, ip): `-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001`); expected not redirected, or redirected to the inbound port 15006 because loopback traffic from the proxy's inbound passthrough source must not loop back into it",
    ]);
    // The proxy's own uid is sent to the inbound port: not a loop, so not in the finding, but seen.
    const answer = result.answers.find((seen) => seen.expectation.id === 'ipv4/outbound/passthrough-source');
    expect(answer?.holds).toBe(false);
    expect(answer?.outcomes.map((seen) => seen.outcome)).toEqual(
      expect.arrayContaining([
        { kind: 'redirect', port: 15006 },
        { kind: 'redirect', port: 15001 },
      ]),
    );
  });
});

describe('what each expected answer accepts, at the port it names', () => {
  const messagesOf = (result: SpaceCheckResult, id: string) =>
    result.findings.filter((finding) => finding.expectation.id === id).map((finding) => finding.message);

  it('TPROXY: diverted to the inbound port passes; to another port fails', () => {
    const { spec, text } = corpusCase('istio/tproxy');
    expect(analyse(spec, [dump(text, 'ipv4', 'istio')], ['ipv4']).status).toBe('passed');
    const result = analyse(spec, [dump(text.replace('--on-port 15006', '--on-port 15007'), 'ipv4', 'istio')], ['ipv4']);
    expect(result.status).toBe('failed');
    expect(messagesOf(result, 'ipv4/inbound/app')).toEqual([
      'inbound TCP from any address to any port, on any other interface, is diverted by TPROXY to port 15007 (rule 1 of mangle ISTIO_TPROXY (iptables-nft, ip): `-A ISTIO_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY --on-port 15007 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff`); expected diverted by TPROXY to port 15006 because inbound TCP to an application port is captured',
    ]);
  });

  it('TPROXY expected, REDIRECT without a port found: no port is right, not even the inbound port itself', () => {
    const { spec, text } = corpusCase('istio/tproxy');
    const [head, nat] = text.split('*nat\n') as [string, string];
    // The REDIRECT goes into the nat table's PREROUTING (iptables refuses it in mangle).
    const broken =
      `${head}*nat\n${nat.replace('-A PREROUTING -i not-istio-nic -j RETURN\n', '-A PREROUTING -i not-istio-nic -j RETURN\n-A PREROUTING -p tcp -j REDIRECT\n')}`.replace(
        '-A ISTIO_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff\n',
        '',
      );
    const result = analyse(spec, [dump(broken, 'ipv4', 'istio')], ['ipv4']);
    expect(result.findings.find((finding) => finding.expectation.id === 'ipv4/inbound/app')?.message).toMatch(
      /^inbound TCP from any address to any port, on any other interface, is redirected to its own port on this host /,
    );
    // Nor is a REDIRECT to the inbound port the TPROXY asked for.
    const toInbound = analyse(
      spec,
      [
        dump(
          broken.replace('-A PREROUTING -p tcp -j REDIRECT\n', '-A PREROUTING -p tcp -j REDIRECT --to-ports 15006\n'),
          'ipv4',
          'istio',
        ),
      ],
      ['ipv4'],
    );
    expect(toInbound.findings.find((finding) => finding.expectation.id === 'ipv4/inbound/app')?.actual).toEqual({
      kind: 'redirect',
      port: 15006,
    });
  });

  it('dropped: INVALID connections dropped pass; the DROP removed fails', () => {
    const { spec, text } = corpusCase('istio/drop-invalid');
    expect(analyse(spec, [dump(text, 'ipv4', 'istio')], ['ipv4']).status).toBe('passed');
    const result = analyse(spec, [dump(text.replace('-A ISTIO_DROP -j DROP\n', ''), 'ipv4', 'istio')], ['ipv4']);
    expect(messagesOf(result, 'ipv4/inbound/invalid-dropped')).toEqual([
      'inbound TCP from any address to any port, conntrack INVALID, is not redirected (original destination) (the policy of nat PREROUTING (iptables-nft, ip): `policy ACCEPT of PREROUTING`); expected dropped because packets in conntrack state INVALID are dropped',
    ]);
  });

  it('a DNAT to the proxy port is not the REDIRECT asked for', () => {
    const result = analyse(
      PRESETS.linkerd.spec,
      [dump(linkerd.replace('-j REDIRECT --to-ports 4140', '-j DNAT --to-destination 10.0.0.1:4140'))],
      ['ipv4'],
    );
    expect(result.findings.map((finding) => [finding.expectation.id, finding.actual])).toEqual([
      ['ipv4/outbound/app', { kind: 'dnat', address: { family: 'ipv4', value: 0x0a000001n }, port: 4140 }],
    ]);
  });

  it('not-looped: a DNAT to the inbound port is not the answer either', () => {
    const { spec, text } = corpusCase('istio/empty');
    const broken = text
      .replace('-A ISTIO_OUTPUT -s 127.0.0.6/32 -o lo -j RETURN\n', '')
      .replace('-A ISTIO_OUTPUT -o lo -m owner ! --uid-owner 1337 -j RETURN\n', '')
      .replace('-A ISTIO_OUTPUT -o lo -m owner ! --gid-owner 1337 -j RETURN\n', '')
      .replace(
        '-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n',
        '-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n-A ISTIO_OUTPUT -j ISTIO_REDIRECT\n',
      )
      .replace(
        '-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
        '-A ISTIO_REDIRECT -p tcp -j DNAT --to-destination 10.0.0.1:15006',
      );
    const result = analyse(spec, [dump(broken, 'ipv4', 'istio')], ['ipv4']);
    expect(
      result.findings
        .filter((finding) => finding.expectation.id === 'ipv4/outbound/passthrough-source')
        .map((finding) => finding.actual.kind),
    ).toEqual(['dnat']);
  });
});

describe('findings are grouped by the rule, the answer and the assumptions', () => {
  it('two unmodelled matches on different ports make two findings at the same REDIRECT', () => {
    const first =
      '-A PROXY_INIT_OUTPUT -p tcp -m tcp --dport 80 -m statistic --mode random --probability 0.5 -j RETURN';
    const second =
      '-A PROXY_INIT_OUTPUT -p tcp -m tcp --dport 81 -m statistic --mode random --probability 0.5 -j RETURN';
    const text = linkerd
      .replace(IGNORE_LOOPBACK, [first, second, IGNORE_LOOPBACK].join('\n'))
      .replace('--to-ports 4140', '--to-ports 4141');
    const result = analyse(PRESETS.linkerd.spec, [dump(text)], ['ipv4']);
    const app = result.findings.filter((finding) => finding.expectation.id === 'ipv4/outbound/app');
    expect(
      app.map((finding) => [
        finding.reason,
        finding.decidedBy?.position,
        finding.assumed.map((at) => at.position),
        finding.regions.length,
      ]),
    ).toEqual([
      ['RulesMismatch', 5, [], 1],
      ['RulesUnknownMatch', 2, [2], 1],
      ['RulesUnknownMatch', 5, [2], 1],
      ['RulesUnknownMatch', 3, [3], 1],
      ['RulesUnknownMatch', 5, [3], 1],
    ]);
    // Where the app's packets went, each rule and answer once however many pieces got it.
    const seen = result.answers.find((answer) => answer.expectation.id === 'ipv4/outbound/app')?.outcomes ?? [];
    expect(seen.map((at) => `${describeOutcome(at.outcome)} @ ${at.decidedBy?.position}`).sort()).toEqual([
      'not redirected (original destination) @ 2',
      'not redirected (original destination) @ 3',
      'redirected to local port 4141 @ 5',
    ]);
  });
});

describe('an expectation of several regions', () => {
  it('a piece in one of them only is still checked: the proxy uid redirected once its RETURN is gone', () => {
    const result = analyse(
      PRESETS.linkerd.spec,
      [
        dump(
          linkerd.replace(
            '-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -m comment --comment "proxy-init/ignore-proxy-user-id" -j RETURN\n',
            '',
          ),
        ),
      ],
      ['ipv4'],
    );
    expect(result.findings.map((finding) => finding.message)).toEqual([
      'outbound TCP to any address but 127.0.0.0/8, any port, from uid 2102, via any interface but lo, is redirected to local port 4140 (rule 2 of nat PROXY_INIT_OUTPUT (iptables-nft, ip): `-A PROXY_INIT_OUTPUT -p tcp -m comment --comment "proxy-init/redirect-all-outgoing-to-proxy-port" -j REDIRECT --to-ports 4140`); expected not redirected because the proxy\'s own traffic (uid 2102) must not loop back into it',
    ]);
    const uid = result.answers.find((answer) => answer.expectation.id === 'ipv4/outbound/proxy-uid-2102');
    expect(uid?.expectation.regions).toHaveLength(2);
    expect(uid?.outcomes.map((at) => `${describeOutcome(at.outcome)} @ ${at.decidedBy?.position}`)).toEqual([
      'not redirected (original destination) @ 1',
      'redirected to local port 4140 @ 2',
    ]);
  });
});

describe('findings are kept up to a bound and counted past it; outcomes too', () => {
  /** Per family 65 outbound and 65 inbound port RETURNs (130 mismatches) and 65 NETMAPs over two expectations (130 unknowns). */
  function hostile(family: Family): Dump {
    const to = family === 'ipv4' ? '192.168.0.0/24' : 'fd00::/120';
    const rules = (count: number, rule: (i: number) => string) => Array.from({ length: count }, (_, i) => rule(i));
    const outbound = [
      ...rules(65, (i) => `-A PROXY_INIT_OUTPUT -p tcp -m tcp --dport ${1000 + 2 * i} -j RETURN`),
      ...rules(65, (i) => `-A PROXY_INIT_OUTPUT -p tcp -m tcp --dport ${3000 + 2 * i} -j NETMAP --to ${to}`),
    ];
    const inbound = rules(65, (i) => `-A PROXY_INIT_REDIRECT -p tcp -m tcp --dport ${1000 + 2 * i} -j RETURN`);
    return dump(
      linkerd
        .replace(IGNORE_LOOPBACK, [...outbound, IGNORE_LOOPBACK].join('\n'))
        .replace(IGNORE_INBOUND, [...inbound, IGNORE_INBOUND].join('\n')),
      family,
    );
  }

  it('256 of each reason are kept, mismatches first; the other 8 are counted', () => {
    const result = analyse(PRESETS.linkerd.spec, [hostile('ipv4'), hostile('ipv6')], ['ipv4', 'ipv6']);
    expect(result.status).toBe('failed');
    expect(result.findings.map((finding) => finding.reason)).toEqual([
      ...Array<string>(256).fill('RulesMismatch'),
      ...Array<string>(256).fill('RulesUnknownMatch'),
    ]);
    expect(result.omittedFindings).toBe(8);
    expect(result.answers.map((answer) => [answer.expectation.id, answer.holds, answer.outcomes.length])).toEqual([
      ['ipv4/outbound/impossible', true, 32],
      ['ipv4/outbound/proxy-uid-2102', true, 1],
      ['ipv4/outbound/loopback', false, 32],
      ['ipv4/outbound/app', false, 32],
      ['ipv4/inbound/loopback', true, 32],
      ['ipv4/inbound/loopback-destination', true, 32],
      ['ipv4/inbound/excluded-port', true, 1],
      ['ipv4/inbound/app', false, 32],
      ['ipv6/outbound/impossible', true, 32],
      ['ipv6/outbound/proxy-uid-2102', true, 1],
      ['ipv6/outbound/loopback', false, 32],
      ['ipv6/outbound/app', false, 32],
      ['ipv6/inbound/loopback', true, 32],
      ['ipv6/inbound/loopback-destination', true, 32],
      ['ipv6/inbound/excluded-port', true, 1],
      ['ipv6/inbound/app', false, 32],
    ]);
  });
});

describe('the status', () => {
  it('every interface excluded: every answer asks for something, so the check decides (here: fails)', () => {
    const result = analyse(specFromFlags(['--mesh=linkerd', '--exclude-interfaces=+']), [dump(linkerd)], ['ipv4']);
    expect(result.answers.map((answer) => [answer.expectation.id, answer.expectation.expected, answer.holds])).toEqual([
      ['ipv4/outbound/excluded-interface', { kind: 'not-redirected' }, false],
      ['ipv4/inbound/excluded-interface', { kind: 'not-redirected' }, false],
    ]);
    expect(result.status).toBe('failed');
  });

  it('asked about no family at all, the check is unknown, never passed', () => {
    const analysis = analyzeDumps(PRESETS.linkerd.spec, [dump(linkerd)], { families: ['ipv4'] });
    if (analysis.kind !== 'checked') throw new Error('the dump must parse');
    expect(verifyRuleset(analysis.merged.ruleset, PRESETS.linkerd.spec, [])).toEqual({
      status: 'unknown',
      answers: [],
      findings: [],
      omittedFindings: 0,
    });
  });
});
