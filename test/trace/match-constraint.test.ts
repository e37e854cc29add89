import { describe, expect, it } from 'vitest';
import type { Family } from '../../src/addr/ip.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import type { Rule } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import { ANY_MARK, subtractMarks, markCube } from '../../src/trace/mark-set.js';
import {
  ALL_IDS,
  ALL_PORTS_SET,
  allAddresses,
  cidrSpan,
  portSetSpan,
  ruleConstraint,
  ruleDestinations,
  type TraceFrame,
} from '../../src/trace/match-constraint.js';
import type { TraceHook } from '../../src/trace/packet.js';
import { andConstraints } from '../../src/trace/region.js';

const V4_MAX = 0xffffffffn;
const V6_MAX = (1n << 128n) - 1n;

/** The rules of OUTPUT (or PREROUTING) in a nat table as iptables-save / ip6tables-save prints it. */
function ipt(lines: string[], family: Family = 'ipv4', chain = 'OUTPUT'): Rule[] {
  const text = ['*nat', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...lines, 'COMMIT', ''].join('\n');
  const parsed = parseIptablesSave(text, { backend: 'iptables-nft', family, source: 't' });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return [...(parsed.tables[0]?.chains.get(chain)?.rules ?? [])];
}
const one = (line: string, family: Family = 'ipv4'): Rule => ipt([line], family)[0] as Rule;

/** One rule of an inet nat output chain, its expressions as `nft -j list ruleset` prints them. */
function nft(expr: unknown[]): Rule {
  const json = JSON.stringify({
    nftables: [
      { table: { family: 'inet', name: 't', handle: 1 } },
      {
        chain: {
          family: 'inet',
          table: 't',
          name: 'output',
          handle: 1,
          type: 'nat',
          hook: 'output',
          prio: -100,
          policy: 'accept',
        },
      },
      { rule: { family: 'inet', table: 't', chain: 'output', handle: 2, expr } },
    ],
  });
  const parsed = parseNftJson(json, 'nft.json');
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.tables[0]?.chains.get('output')?.rules[0] as Rule;
}
const match = (left: unknown, right: unknown, op = '=='): unknown => ({ match: { op, left, right } });
const daddr4 = { payload: { protocol: 'ip', field: 'daddr' } };
const daddr6 = { payload: { protocol: 'ip6', field: 'daddr' } };

// Atoms: 0 `eth+ (other)`, 1 eth0, 2 lo, 3 any other interface.
const atoms = buildInterfaceAtoms(['eth0', 'eth+']);
const frame = (hook: TraceHook = 'output', family: Family = 'ipv4'): TraceFrame => ({ family, hook, atoms });
const constraint = (rule: Rule, on: TraceFrame = frame()) => ruleConstraint(rule, on, andConstraints);
const cube = (fields: object, unknown?: string) => ({ kind: 'cube', constraint: fields, unknown });

describe('address spaces', () => {
  it('all addresses of each family; /32, /0, /128 and a base with host bits', () => {
    expect(allAddresses('ipv4')).toEqual([[0n, V4_MAX]]);
    expect(allAddresses('ipv6')).toEqual([[0n, V6_MAX]]);
    expect(cidrSpan(0x0a000007n, 32, 'ipv4')).toEqual([[0x0a000007n, 0x0a000007n]]);
    expect(cidrSpan(0x0a000007n, 24, 'ipv4')).toEqual([[0x0a000000n, 0x0a0000ffn]]);
    expect(cidrSpan(0x0a000007n, 0, 'ipv4')).toEqual([[0n, V4_MAX]]);
    expect(cidrSpan(1n, 128, 'ipv6')).toEqual([[1n, 1n]]);
    expect(cidrSpan((0xfd00n << 112n) | 5n, 64, 'ipv6')).toEqual([
      [0xfd00n << 112n, (0xfd00n << 112n) + (1n << 64n) - 1n],
    ]);
    expect(cidrSpan(5n, 0, 'ipv6')).toEqual([[0n, V6_MAX]]);
    expect(ALL_IDS).toEqual([[0n, V4_MAX]]);
    expect(ALL_PORTS_SET).toEqual([[1n, 65535n]]);
  });

  it('port sets: all, one range, several ranges out of order, none', () => {
    expect(portSetSpan({ kind: 'all' })).toBe(ALL_PORTS_SET);
    expect(portSetSpan({ kind: 'ranges', ranges: [{ from: 15001, to: 15001 }] })).toEqual([[15001n, 15001n]]);
    expect(
      portSetSpan({
        kind: 'ranges',
        ranges: [
          { from: 443, to: 443 },
          { from: 80, to: 90 },
          { from: 91, to: 100 },
        ],
      }),
    ).toEqual([
      [80n, 100n],
      [443n, 443n],
    ]);
    expect(portSetSpan({ kind: 'ranges', ranges: [] })).toEqual([]);
  });
});

describe('ruleDestinations', () => {
  it('the destination of a -d test, none without one, none for a source or a negated test', () => {
    expect(ruleDestinations(one('-A OUTPUT -d 10.0.0.0/8 -j RETURN'), 'ipv4')).toEqual([[0x0a000000n, 0x0affffffn]]);
    expect(ruleDestinations(one('-A OUTPUT -p tcp -j REDIRECT --to-ports 15001'), 'ipv4')).toBeUndefined();
    expect(ruleDestinations(one('-A OUTPUT -s 127.0.0.6/32 -o lo -j RETURN'), 'ipv4')).toBeUndefined();
    expect(ruleDestinations(one('-A OUTPUT ! -d 127.0.0.1/32 -o lo -j RETURN'), 'ipv4')).toBeUndefined();
  });

  it('nft: a set of prefixes is their union; two tests intersect; another family meets nothing', () => {
    expect(
      ruleDestinations(
        nft([match(daddr4, { set: [{ prefix: { addr: '10.0.0.0', len: 8 } }, '192.168.0.1'] }), { return: null }]),
        'ipv4',
      ),
    ).toEqual([
      [0x0a000000n, 0x0affffffn],
      [0xc0a80001n, 0xc0a80001n],
    ]);
    expect(
      ruleDestinations(
        nft([
          match(daddr4, { prefix: { addr: '10.0.0.0', len: 8 } }),
          match(daddr4, { prefix: { addr: '10.1.0.0', len: 16 } }),
          { return: null },
        ]),
        'ipv4',
      ),
    ).toEqual([[0x0a010000n, 0x0a01ffffn]]);
    expect(
      ruleDestinations(
        nft([
          match(daddr4, { prefix: { addr: '10.1.0.0', len: 16 } }),
          match(daddr4, { prefix: { addr: '10.0.0.0', len: 8 } }),
          { return: null },
        ]),
        'ipv4',
      ),
    ).toEqual([[0x0a010000n, 0x0a01ffffn]]);
    expect(ruleDestinations(nft([match(daddr6, '::1'), { return: null }]), 'ipv4')).toEqual([]);
    expect(
      ruleDestinations(nft([match(daddr6, { prefix: { addr: 'fd00::', len: 8 } }), { return: null }]), 'ipv4'),
    ).toEqual([]);
    expect(ruleDestinations(nft([match(daddr6, '::1'), { return: null }]), 'ipv6')).toEqual([[1n, 1n]]);
  });
});

describe('ruleConstraint: protocols, ports, addresses', () => {
  it('-p tcp and ! -p tcp, -p udp', () => {
    expect(constraint(one('-A OUTPUT -p tcp -j RETURN'))).toEqual(cube({ protocols: 0b01 }));
    expect(constraint(one('-A OUTPUT ! -p tcp -j RETURN'))).toEqual(cube({ protocols: 0b10 }));
    expect(constraint(one('-A OUTPUT -p udp -j RETURN'))).toEqual(cube({ protocols: 0b10 }));
  });

  it('a port and its negation, split at the port', () => {
    expect(constraint(one('-A OUTPUT -p tcp -m tcp --dport 15008 -j RETURN'))).toEqual(
      cube({ protocols: 0b01, dport: [[15008n, 15008n]] }),
    );
    expect(constraint(one('-A OUTPUT -p tcp -m tcp ! --dport 15008 -j RETURN'))).toEqual(
      cube({
        protocols: 0b01,
        dport: [
          [1n, 15007n],
          [15009n, 65535n],
        ],
      }),
    );
    expect(constraint(one('-A OUTPUT -p tcp -m tcp --sport 1:1023 -j RETURN'))).toEqual(
      cube({ protocols: 0b01, sport: [[1n, 1023n]] }),
    );
  });

  it('two port tests that share no port never match', () => {
    expect(constraint(one('-A OUTPUT -p tcp -m tcp --dport 80 -m multiport --dports 443,8443 -j RETURN'))).toEqual({
      kind: 'never',
    });
  });

  it('-d and ! -d over the whole family', () => {
    expect(constraint(one('-A OUTPUT -d 127.0.0.1/32 -j RETURN'))).toEqual(
      cube({ daddr: [[0x7f000001n, 0x7f000001n]] }),
    );
    expect(constraint(one('-A OUTPUT ! -d 127.0.0.1/32 -j RETURN'))).toEqual(
      cube({
        daddr: [
          [0n, 0x7f000000n],
          [0x7f000002n, V4_MAX],
        ],
      }),
    );
    expect(constraint(one('-A OUTPUT -s 127.0.0.6/32 -j RETURN'))).toEqual(
      cube({ saddr: [[0x7f000006n, 0x7f000006n]] }),
    );
    expect(constraint(one('-A OUTPUT ! -d ::1/128 -j RETURN', 'ipv6'), frame('output', 'ipv6'))).toEqual(
      cube({
        daddr: [
          [0n, 0n],
          [2n, V6_MAX],
        ],
      }),
    );
  });

  it('nft: an ip6 test never matches an IPv4 packet, not even negated; meta nfproto', () => {
    expect(constraint(nft([match(daddr6, '::1'), { return: null }]))).toEqual({ kind: 'never' });
    expect(constraint(nft([match(daddr6, '::1', '!='), { return: null }]))).toEqual({ kind: 'never' });
    const nfproto = nft([match({ meta: { key: 'nfproto' } }, 'ipv4'), { return: null }]);
    expect(constraint(nfproto)).toEqual(cube({}));
    expect(constraint(nfproto, frame('output', 'ipv6'))).toEqual({ kind: 'never' });
  });
});

describe('ruleConstraint: interfaces', () => {
  it('-o on OUTPUT and -i on PREROUTING test the atoms', () => {
    expect(constraint(one('-A OUTPUT -o eth0 -j RETURN'))).toEqual(cube({ iface: 0b0010n }));
    expect(constraint(one('-A OUTPUT -o eth+ -j RETURN'))).toEqual(cube({ iface: 0b0011n }));
    expect(constraint(one('-A OUTPUT ! -o eth0 -j RETURN'))).toEqual(cube({ iface: 0b1101n }));
    const inbound = ipt(['-A PREROUTING -i eth0 -j RETURN', '-A PREROUTING ! -i lo -j RETURN'], 'ipv4', 'PREROUTING');
    expect(inbound.map((rule) => constraint(rule, frame('prerouting')))).toEqual([
      cube({ iface: 0b0010n }),
      cube({ iface: 0b1011n }),
    ]);
  });

  it('the side with no interface on this hook compares the empty name', () => {
    expect(constraint(one('-A OUTPUT -i eth0 -j RETURN'))).toEqual({ kind: 'never' });
    expect(constraint(one('-A OUTPUT ! -i eth0 -j RETURN'))).toEqual(cube({}));
    expect(constraint(one('-A OUTPUT -i + -j RETURN'))).toEqual(cube({}));
    expect(constraint(one('-A OUTPUT -i S+ -j RETURN'))).toEqual({ kind: 'never' });
    expect(constraint(nft([match({ meta: { key: 'iifname' } }, { set: ['*', 'eth0'] }), { return: null }]))).toEqual(
      cube({}),
    );
    expect(constraint(one('-A OUTPUT ! -i + -j RETURN'))).toEqual({ kind: 'never' });
    const inbound = ipt(['-A PREROUTING -o eth0 -j RETURN', '-A PREROUTING ! -o eth0 -j RETURN'], 'ipv4', 'PREROUTING');
    expect(inbound.map((rule) => constraint(rule, frame('prerouting')))).toEqual([{ kind: 'never' }, cube({})]);
  });
});

describe('ruleConstraint: owner, marks, conntrack, comments, unknown matches', () => {
  it('owner on OUTPUT: one uid, its negation, a range, a gid', () => {
    expect(constraint(one('-A OUTPUT -m owner --uid-owner 1337 -j RETURN'))).toEqual(cube({ uid: [[1337n, 1337n]] }));
    expect(constraint(one('-A OUTPUT -m owner ! --uid-owner 1337 -j RETURN'))).toEqual(
      cube({
        uid: [
          [0n, 1336n],
          [1338n, V4_MAX],
        ],
      }),
    );
    expect(constraint(one('-A OUTPUT -m owner --uid-owner 1000-2000 -j RETURN'))).toEqual(
      cube({ uid: [[1000n, 2000n]] }),
    );
    expect(constraint(one('-A OUTPUT -m owner --gid-owner 0 -j RETURN'))).toEqual(cube({ gid: [[0n, 0n]] }));
  });

  it('nft: a set of uids is their union', () => {
    expect(constraint(nft([match({ meta: { key: 'skuid' } }, { set: [5, 3, 4, 1337] }), { return: null }]))).toEqual(
      cube({
        uid: [
          [3n, 5n],
          [1337n, 1337n],
        ],
      }),
    );
  });

  it('owner on PREROUTING never matches, not even negated', () => {
    const rules = ipt(
      ['-A PREROUTING -m owner --uid-owner 1337 -j RETURN', '-A PREROUTING -m owner ! --uid-owner 1337 -j RETURN'],
      'ipv4',
      'PREROUTING',
    );
    expect(rules.map((rule) => constraint(rule, frame('prerouting')))).toEqual([{ kind: 'never' }, { kind: 'never' }]);
  });

  it('mark and connmark with masks, and their negation', () => {
    expect(constraint(one('-A OUTPUT -m mark --mark 0x539 -j RETURN'))).toEqual(
      cube({ mark: [{ care: 0xffffffff, bits: 0x539 }] }),
    );
    expect(constraint(one('-A OUTPUT -m mark --mark 0x10/0xf0 -j RETURN'))).toEqual(
      cube({ mark: [{ care: 0xf0, bits: 0x10 }] }),
    );
    expect(constraint(one('-A OUTPUT -m mark ! --mark 0x10/0xf0 -j RETURN'))).toEqual(
      cube({ mark: subtractMarks(ANY_MARK, markCube(0x10, 0xf0)) }),
    );
    expect(constraint(one('-A OUTPUT -m connmark --mark 0x1/0x1 -j RETURN'))).toEqual(
      cube({ ctmark: [{ care: 0x1, bits: 0x1 }] }),
    );
    expect(constraint(one('-A OUTPUT -m connmark ! --mark 0x1/0x1 -j RETURN'))).toEqual(
      cube({ ctmark: [{ care: 0x1, bits: 0x0 }] }),
    );
  });

  it('conntrack states and their negation', () => {
    expect(constraint(one('-A OUTPUT -m conntrack --ctstate NEW,ESTABLISHED -j RETURN'))).toEqual(
      cube({ ctstates: 0b00011 }),
    );
    expect(constraint(one('-A OUTPUT -m conntrack ! --ctstate NEW,ESTABLISHED -j RETURN'))).toEqual(
      cube({ ctstates: 0b11100 }),
    );
    expect(constraint(one('-A OUTPUT -m conntrack --ctstate INVALID -j DROP'))).toEqual(cube({ ctstates: 0b01000 }));
  });

  it('a comment narrows nothing; an unknown match is named by its text, the first one only', () => {
    expect(constraint(one('-A OUTPUT -m comment --comment "istio" -j RETURN'))).toEqual(cube({}));
    const addrtype = one('-A OUTPUT -m addrtype --dst-type LOCAL -p tcp -j RETURN');
    const text = addrtype.matches.find((m) => m.kind === 'unknown');
    expect(text).toBeDefined();
    expect(constraint(addrtype)).toEqual(cube({ protocols: 0b01 }, text?.kind === 'unknown' ? text.text : ''));
    const two = one('-A OUTPUT -m addrtype --dst-type LOCAL -m socket --transparent -j RETURN');
    const first = two.matches.find((m) => m.kind === 'unknown');
    expect(constraint(two)).toEqual(cube({}, first?.kind === 'unknown' ? first.text : ''));
  });

  it('a match that cannot hold ends the rule, even after an unknown one', () => {
    expect(
      constraint(one('-A OUTPUT -m addrtype --dst-type LOCAL -m owner --uid-owner 1 -j RETURN'), frame('prerouting')),
    ).toEqual({ kind: 'never' });
  });
});
