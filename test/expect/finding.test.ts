import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRESETS, type InterceptionSpec } from '../../src/config/interception.js';
import type { Family } from '../../src/addr/ip.js';
import type { SpaceCheckResult } from '../../src/expect/space-check.js';
import { describeExpected } from '../../src/expect/expected.js';
import { describeRule, findingMessage } from '../../src/expect/finding.js';
import { analyzeDumps, type Dump } from '../../src/rules-check/analyze.js';
import { CORPUS } from '../explain/corpus.js';
import { analyseLinkerd, linkerd, REDIRECT_OUT } from './linkerd-dump.js';

// The sentence a finding puts in the termination message, word by word: which packets, where they
// end up, the rule that decided it and what was expected instead. Each dump is Linkerd's own
// (linkerd2-proxy-init, cni-default) with one rule changed, as an operator or a broken plugin would.

const istioNft = readFileSync(`${CORPUS}/istio-nftables/empty/nft-list-ruleset.json`, 'utf8');
const IGNORE_LOOPBACK = '-A PROXY_INIT_OUTPUT -o lo -m comment --comment "proxy-init/ignore-loopback" -j RETURN';

function check(
  text: string,
  family: Family = 'ipv4',
  options: { workLimit?: number; spec?: InterceptionSpec } = {},
): SpaceCheckResult {
  return analyseLinkerd(text, family, options).check;
}

/** The dump with a rule inserted before Linkerd's ignore-loopback RETURN. */
const beforeLoopback = (...rules: string[]) => linkerd.replace(IGNORE_LOOPBACK, [...rules, IGNORE_LOOPBACK].join('\n'));
const messages = (result: SpaceCheckResult) => result.findings.map((finding) => finding.message);

describe('a mismatch names the packets, the deciding rule and what was expected', () => {
  it('the outbound REDIRECT removed: the chain policy decides', () => {
    const result = check(linkerd.replace(`${REDIRECT_OUT}\n`, ''));
    expect(result.status).toBe('failed');
    expect(messages(result)).toEqual([
      'outbound TCP to any address but 127.0.0.0/8, any port, from any uid but 2102, via any interface but lo, is not redirected (original destination) (the policy of nat OUTPUT (iptables-nft, ip): `policy ACCEPT of OUTPUT`); expected redirected to local port 4140 because outbound TCP from the application is captured',
    ]);
    expect(result.findings[0]).toMatchObject({
      reason: 'RulesMismatch',
      actual: { kind: 'accept' },
      decidedBy: { table: 'nat', chain: 'OUTPUT', position: 0 },
      assumed: [],
    });
  });

  it('the same rules as ip6tables prints them: the family is ip6, and the rule is named by its position', () => {
    const result = check(linkerd.replace('--to-ports 4140', '--to-ports 4141'), 'ipv6');
    expect(messages(result)).toEqual([
      'outbound TCP to any address but ::1/128, any port, from any uid but 2102, via any interface but lo, is redirected to local port 4141 (rule 3 of nat PROXY_INIT_OUTPUT (iptables-nft, ip6): `-A PROXY_INIT_OUTPUT -p tcp -m comment --comment "proxy-init/redirect-all-outgoing-to-proxy-port" -j REDIRECT --to-ports 4141`); expected redirected to local port 4140 because outbound TCP from the application is captured',
    ]);
  });

  it('an nft inet table is named inet', () => {
    // Istio's nftables "empty" case never jumps to its redirect chain: asked for capture, its output policy decides.
    const dump: Dump = { backend: 'nftables', source: 'istio', text: istioNft };
    const analysis = analyzeDumps(PRESETS.istio.spec, [dump], { families: ['ipv4'] });
    if (analysis.kind !== 'checked') throw new Error('the dump must parse');
    expect(messages(analysis.check)[0]).toBe(
      'outbound TCP to any address but 127.0.0.0/8, any port but 15020, from any uid but 1337, any gid but 1337, via any interface but lo, is not redirected (original destination) (the policy of istio-proxy-nat output (nftables, inet): `policy ACCEPT of output`); expected redirected to local port 15001 because outbound TCP from the application is captured',
    );
  });

  it('no nat chain at all: "no rule", outbound finding before inbound', () => {
    const result = check('*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n');
    expect(messages(result)).toEqual([
      'outbound TCP to any address but 127.0.0.0/8, any port, from any uid but 2102, via any interface but lo, is not redirected (original destination) (no rule (no chain is hooked there)); expected redirected to local port 4140 because outbound TCP from the application is captured',
      'inbound TCP from any address to any port but 4190-4191, on any interface but lo, is not redirected (original destination) (no rule (no chain is hooked there)); expected redirected to local port 4143 because inbound TCP to an application port is captured',
    ]);
  });
});

describe('an unknown answer says why, at which rule, and what was expected', () => {
  it('an action the tracer does not model (NETMAP in OUTPUT)', () => {
    const result = check(beforeLoopback('-A PROXY_INIT_OUTPUT -d 10.0.0.0/8 -j NETMAP --to 192.168.0.0/8'));
    expect(result.status).toBe('unknown');
    expect(result.findings.map((finding) => finding.reason)).toEqual(['RulesUnknownMatch', 'RulesUnknownMatch']);
    expect(messages(result)[1]).toBe(
      'outbound TCP to 10.0.0.0/8, any port, from any uid but 2102, via any interface but lo: cannot tell where it ends up, cannot evaluate "-j NETMAP --to 192.168.0.0/8", at rule 2 of nat PROXY_INIT_OUTPUT (iptables-nft, ip): `-A PROXY_INIT_OUTPUT -d 10.0.0.0/8 -j NETMAP --to 192.168.0.0/8`; expected redirected to local port 4140 (outbound TCP from the application is captured)',
    );
  });

  it('a match the tracer does not model: each assumption it was followed through is named, joined by "and"', () => {
    const random = '-A PROXY_INIT_OUTPUT -m statistic --mode random --probability 0.5 -j RETURN';
    const nth = '-A PROXY_INIT_OUTPUT -m statistic --mode nth --every 3 --packet 0 -j RETURN';
    const result = check(beforeLoopback(random, nth));
    expect(result.status).toBe('unknown');
    const head =
      'outbound TCP to any address but 127.0.0.0/8, any port, from any uid but 2102, via any interface but lo: cannot tell where it ends up, it is not redirected (original destination) only if';
    const tail = `at rule 2 of nat PROXY_INIT_OUTPUT (iptables-nft, ip): \`${random}\`; expected redirected to local port 4140 (outbound TCP from the application is captured)`;
    expect(messages(result)).toEqual([
      `${head} \`${random}\` match(es) as assumed, ${tail}`,
      `${head} \`${random}\` and \`${nth}\` match(es) as assumed, ${tail}`,
    ]);
    expect(result.findings.map((finding) => finding.assumed.map((at) => at.position))).toEqual([[2], [2, 3]]);
  });

  it('the work limit: no rule decided, so none is named (and no chain is said to be missing)', () => {
    const result = check(linkerd, 'ipv4', { workLimit: 3 });
    expect(result.status).toBe('unknown');
    expect(messages(result)[1]).toBe(
      'outbound TCP to any address but 127.0.0.0/8, any port, from any uid but 2102, via any interface but lo: cannot tell where it ends up, the analysis reached its work limit (3 units: rule visits and regions split off); the rules are too many or too tangled to decide; expected redirected to local port 4140 (outbound TCP from the application is captured)',
    );
  });
});

describe('the parts of a sentence', () => {
  it('a rule at position 1 is a rule, not the policy', () => {
    const first = {
      backend: 'iptables-legacy',
      family: 'ipv4',
      table: 'nat',
      chain: 'PROXY_INIT_OUTPUT',
      position: 1,
      text: '-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -j RETURN',
    } as const;
    expect(describeRule(first)).toBe(
      'rule 1 of nat PROXY_INIT_OUTPUT (iptables-legacy, ip): `-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -j RETURN`',
    );
    expect(describeRule(undefined)).toBe('no rule (no chain is hooked there)');
  });

  it('every expected answer in words', () => {
    expect(describeExpected({ kind: 'redirect', port: 4140 })).toBe('redirected to local port 4140');
    expect(describeExpected({ kind: 'tproxy', port: 15006 })).toBe('diverted by TPROXY to port 15006');
    expect(describeExpected({ kind: 'not-redirected' })).toBe('not redirected');
    expect(describeExpected({ kind: 'dropped' })).toBe('dropped');
    expect(describeExpected({ kind: 'not-looped', inboundPort: 15006 })).toBe(
      'not redirected, or redirected to the inbound port 15006',
    );
  });

  it('three regions are named, a fourth and fifth are counted; an expectation without an answer expects "anything"', () => {
    const result = check(linkerd.replace(`${REDIRECT_OUT}\n`, ''));
    const finding = result.findings[0];
    if (!finding) throw new Error('a finding');
    const region = finding.regions[0];
    if (!region) throw new Error('a region');
    const ports = [80, 443, 8080, 9090, 9091].map((port) => ({
      ...region,
      dport: [[BigInt(port), BigInt(port)]] as const,
    }));
    const opening = (port: number) =>
      `outbound TCP to any address but 127.0.0.0/8, port ${port}, from any uid but 2102, via any interface but lo`;
    const rest =
      'is not redirected (original destination) (the policy of nat OUTPUT (iptables-nft, ip): `policy ACCEPT of OUTPUT`); expected redirected to local port 4140 because outbound TCP from the application is captured';
    expect(findingMessage({ ...finding, regions: ports.slice(0, 3) })).toBe(
      `${opening(80)}; and ${opening(443)}; and ${opening(8080)}, ${rest}`,
    );
    expect(findingMessage({ ...finding, regions: ports })).toBe(
      `${opening(80)}; and ${opening(443)}; and ${opening(8080)}; and 2 more region(s), ${rest}`,
    );
    const anything = { ...finding.expectation, expected: undefined, because: 'the configuration does not say' };
    expect(findingMessage({ ...finding, expectation: anything })).toBe(
      `${opening(80).replace(', port 80,', ', any port,')}, ${rest.replace('redirected to local port 4140 because outbound TCP from the application is captured', 'anything because the configuration does not say')}`,
    );
  });
});
