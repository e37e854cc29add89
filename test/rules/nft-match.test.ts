import { describe, expect, it } from 'vitest';
import { parseCidr, type Cidr } from '../../src/addr/cidr.js';
import type { Match } from '../../src/rules/model.js';
import { ct, match, meta, payload, readRule, RETURN, type NftFamily } from './nft-rule.js';

/**
 * `match` expressions as nft 1.0.6 prints them in `nft -j list ruleset`, read into the model's
 * matches. Every right-hand side below was printed by nft from the rule its test names (`-n` for
 * numeric protocols), unless the test says it is input nft would refuse.
 */

/** The matches and text of a rule holding one match expression and a return. */
function read(expression: unknown, family: NftFamily = 'inet'): { matches: readonly Match[]; text: string } {
  const { matches, text, actions } = readRule([expression, RETURN], family);
  expect(actions).toEqual([{ kind: 'return' }]);
  return { matches, text };
}

/** What a match the engine cannot model becomes: an unknown match quoting the expression (cut at 120 characters). */
function unknown(expression: unknown): { matches: readonly Match[]; text: string } {
  const json = JSON.stringify(expression);
  const text = json.length > 120 ? `${json.slice(0, 117)}...` : json;
  return { matches: [{ kind: 'unknown', text }], text: `${text} return` };
}

const cidr = (text: string): Cidr => {
  const parsed = parseCidr(text);
  if (!parsed) throw new Error(text);
  return parsed;
};

describe('nft match: the operator', () => {
  it('"==" is a plain match, "!=" a negated one', () => {
    expect(read(match('==', meta('skuid'), 1337))).toEqual({
      matches: [{ kind: 'owner', field: 'uid', ids: [{ from: 1337, to: 1337 }], negated: false }],
      text: 'meta skuid 1337 return',
    });
    expect(read(match('!=', meta('skuid'), 1337))).toEqual({
      matches: [{ kind: 'owner', field: 'uid', ids: [{ from: 1337, to: 1337 }], negated: true }],
      text: 'meta skuid != 1337 return',
    });
  });

  it('"in" (how nft prints a ct state test) is a plain match', () => {
    expect(read(match('in', ct('state'), 'new'))).toEqual({
      matches: [{ kind: 'ctstate', states: ['new'], negated: false }],
      text: 'ct state new return',
    });
  });

  it('the comparisons <, >, <= and >= are not modelled: unknown matches', () => {
    for (const op of ['<', '>', '<=', '>=']) {
      const expression = match(op, meta('skuid'), 1000);
      expect(read(expression), op).toEqual(unknown(expression));
    }
  });

  it('"eq" and "ne", which nft\'s JSON parser refuses ("Unknown relational op"), are unknown matches', () => {
    for (const op of ['eq', 'ne', '']) {
      const expression = match(op, meta('skuid'), 1337);
      expect(read(expression), op).toEqual(unknown(expression));
    }
  });
});

describe('nft match: masked marks (`meta mark & 0xff == 0x1`)', () => {
  it('a masked meta mark, equal and not equal', () => {
    expect(read(match('==', { '&': [meta('mark'), 255] }, 1))).toEqual({
      matches: [{ kind: 'mark', field: 'mark', value: 1, mask: 255, negated: false }],
      text: 'meta mark & 0xff 0x1 return',
    });
    expect(read(match('!=', { '&': [meta('mark'), 65280] }, 512))).toEqual({
      matches: [{ kind: 'mark', field: 'mark', value: 512, mask: 65280, negated: true }],
      text: 'meta mark & 0xff00 != 0x200 return',
    });
  });

  it('a masked ct mark', () => {
    expect(read(match('==', { '&': [ct('mark'), 15] }, 2))).toEqual({
      matches: [{ kind: 'mark', field: 'ctmark', value: 2, mask: 15, negated: false }],
      text: 'ct mark & 0xf 0x2 return',
    });
  });

  it('a masked mark against a set, a masked uid, tcp flags and ct status are unknown matches', () => {
    for (const expression of [
      match('==', { '&': [meta('mark'), 255] }, { set: [1, 2] }),
      match('==', { '&': [meta('skuid'), 255] }, 1),
      match('==', { '&': [payload('tcp', 'flags'), ['syn', 'ack']] }, 'syn'),
      match('==', { '&': [ct('status'), 'expected'] }, 'expected'),
    ]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });

  it('a mask nft would never print (a string) is refused: an unknown match', () => {
    const expression = match('==', { '&': [meta('mark'), '0xff'] }, 1);
    expect(read(expression)).toEqual(unknown(expression));
  });
});

describe('nft match: protocols', () => {
  it('meta l4proto, ip protocol and ip6 nexthdr, by name', () => {
    expect(read(match('==', meta('l4proto'), 'tcp'))).toEqual({
      matches: [{ kind: 'protocol', protocols: ['tcp'], negated: false }],
      text: 'meta l4proto tcp return',
    });
    expect(read(match('!=', meta('l4proto'), 'udp'))).toEqual({
      matches: [{ kind: 'protocol', protocols: ['udp'], negated: true }],
      text: 'meta l4proto != udp return',
    });
    expect(read(match('==', payload('ip', 'protocol'), 'icmp'))).toEqual({
      matches: [{ kind: 'protocol', protocols: ['icmp'], negated: false }],
      text: 'ip protocol icmp return',
    });
    expect(read(match('==', payload('ip6', 'nexthdr'), 'udp'))).toEqual({
      matches: [{ kind: 'protocol', protocols: ['udp'], negated: false }],
      text: 'ip6 nexthdr udp return',
    });
    expect(read(match('==', meta('l4proto'), { set: ['tcp', 'udp'] }))).toEqual({
      matches: [{ kind: 'protocol', protocols: ['tcp', 'udp'], negated: false }],
      text: 'meta l4proto { tcp, udp } return',
    });
  });

  it('by number (`nft -n`): 6, 17, 1 and 58 are named; another number stays a number', () => {
    expect(read(match('==', meta('l4proto'), { set: [6, 17] }))).toEqual({
      matches: [{ kind: 'protocol', protocols: ['tcp', 'udp'], negated: false }],
      text: 'meta l4proto { 6, 17 } return',
    });
    expect(read(match('==', payload('ip', 'protocol'), 1)).matches).toEqual([
      { kind: 'protocol', protocols: ['icmp'], negated: false },
    ]);
    expect(read(match('==', meta('l4proto'), 58)).matches).toEqual([
      { kind: 'protocol', protocols: ['ipv6-icmp'], negated: false },
    ]);
    expect(read(match('==', meta('l4proto'), 253))).toEqual({
      matches: [{ kind: 'protocol', protocols: ['253'], negated: false }],
      text: 'meta l4proto 253 return',
    });
  });

  it('a protocol range and a named set are unknown matches', () => {
    for (const expression of [
      match('==', meta('l4proto'), { range: [1, 10] }),
      match('!=', meta('l4proto'), '@protos'),
      match('==', meta('l4proto'), { set: ['tcp', '@protos'] }),
    ]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });

  it('an empty set, which nft never prints, is refused: an unknown match', () => {
    const expression = match('==', meta('l4proto'), { set: [] });
    expect(read(expression)).toEqual(unknown(expression));
  });
});

describe('nft match: meta nfproto', () => {
  it('ipv4 and ipv6 are the family', () => {
    expect(read(match('==', meta('nfproto'), 'ipv4'))).toEqual({
      matches: [{ kind: 'l3', family: 'ipv4' }],
      text: 'meta nfproto ipv4 return',
    });
    expect(read(match('==', meta('nfproto'), 'ipv6'))).toEqual({
      matches: [{ kind: 'l3', family: 'ipv6' }],
      text: 'meta nfproto ipv6 return',
    });
  });

  it('negated, a set of both, or another number: unknown matches', () => {
    for (const expression of [
      match('!=', meta('nfproto'), 'ipv6'),
      match('==', meta('nfproto'), { set: ['ipv4', 'ipv6'] }),
      match('==', meta('nfproto'), 7),
      match('==', meta('nfproto'), { range: [2, 10] }),
    ]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: interfaces', () => {
  it('iifname and oifname, shown without "meta"', () => {
    expect(read(match('==', meta('iifname'), 'eth0'))).toEqual({
      matches: [{ kind: 'interface', field: 'iif', names: ['eth0'], negated: false }],
      text: 'iifname eth0 return',
    });
    expect(read(match('!=', meta('oifname'), 'lo'))).toEqual({
      matches: [{ kind: 'interface', field: 'oif', names: ['lo'], negated: true }],
      text: 'oifname != lo return',
    });
    expect(read(match('==', meta('oifname'), { set: ['lo', 'eth0'] }))).toEqual({
      matches: [{ kind: 'interface', field: 'oif', names: ['lo', 'eth0'], negated: false }],
      text: 'oifname { lo, eth0 } return',
    });
    expect(read(match('==', meta('iifname'), 'veth*')).matches).toEqual([
      { kind: 'interface', field: 'iif', names: ['veth*'], negated: false },
    ]);
  });

  it('meta iif (an index, not a name) and a named set of names are unknown matches', () => {
    for (const expression of [match('==', meta('iif'), 'lo'), match('==', meta('oifname'), '@ifs')]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: owners', () => {
  it('skuid and skgid: values, ranges and sets, from uid 0 to 4294967295', () => {
    expect(read(match('==', meta('skuid'), { range: [1000, 2000] }))).toEqual({
      matches: [{ kind: 'owner', field: 'uid', ids: [{ from: 1000, to: 2000 }], negated: false }],
      text: 'meta skuid 1000-2000 return',
    });
    expect(read(match('==', meta('skuid'), { set: [0, { range: [1000, 2000] }, 4294967295] }))).toEqual({
      matches: [
        {
          kind: 'owner',
          field: 'uid',
          ids: [
            { from: 0, to: 0 },
            { from: 1000, to: 2000 },
            { from: 4294967295, to: 4294967295 },
          ],
          negated: false,
        },
      ],
      text: 'meta skuid { 0, 1000-2000, 4294967295 } return',
    });
    expect(read(match('!=', meta('skgid'), 1337))).toEqual({
      matches: [{ kind: 'owner', field: 'gid', ids: [{ from: 1337, to: 1337 }], negated: true }],
      text: 'meta skgid != 1337 return',
    });
    expect(read(match('==', meta('skgid'), 0)).matches).toEqual([
      { kind: 'owner', field: 'gid', ids: [{ from: 0, to: 0 }], negated: false },
    ]);
  });

  it('a named set is an unknown match', () => {
    const expression = match('==', meta('skuid'), '@uids');
    expect(read(expression)).toEqual(unknown(expression));
  });

  it('ids nft would never print (past 2^32-1, negative, fractional, a reversed range, a name) are refused', () => {
    for (const right of [4294967296, -1, 1.5, { range: [2000, 1000] }, 'root', { range: [1000] }]) {
      const expression = match('==', meta('skuid'), right);
      expect(read(expression), JSON.stringify(right)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: marks', () => {
  it('meta mark and ct mark, shown in hex, with a full mask', () => {
    expect(read(match('==', meta('mark'), 1337))).toEqual({
      matches: [{ kind: 'mark', field: 'mark', value: 1337, mask: 0xffffffff, negated: false }],
      text: 'meta mark 0x539 return',
    });
    expect(read(match('!=', ct('mark'), 1337))).toEqual({
      matches: [{ kind: 'mark', field: 'ctmark', value: 1337, mask: 0xffffffff, negated: true }],
      text: 'ct mark != 0x539 return',
    });
  });

  it('a set or a range of marks is an unknown match', () => {
    for (const expression of [match('==', meta('mark'), { set: [1, 2] }), match('==', ct('mark'), { range: [1, 5] })]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: ct state', () => {
  it('one state, a list (`in`) and a set', () => {
    expect(read(match('in', ct('state'), ['established', 'related']))).toEqual({
      matches: [{ kind: 'ctstate', states: ['established', 'related'], negated: false }],
      text: 'ct state established,related return',
    });
    expect(read(match('==', ct('state'), { set: ['new', 'untracked'] }))).toEqual({
      matches: [{ kind: 'ctstate', states: ['new', 'untracked'], negated: false }],
      text: 'ct state { new, untracked } return',
    });
    expect(read(match('!=', ct('state'), 'invalid'))).toEqual({
      matches: [{ kind: 'ctstate', states: ['invalid'], negated: true }],
      text: 'ct state != invalid return',
    });
  });

  it('a state nft does not have, even beside one it has, is refused: an unknown match', () => {
    const expression = match('==', ct('state'), { set: ['established', 'snat'] });
    expect(read(expression)).toEqual(unknown(expression));
  });

  it('a named set, and ct status, are unknown matches', () => {
    for (const expression of [match('==', ct('state'), '@st'), match('in', ct('status'), 'dnat')]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: addresses', () => {
  it('ip saddr and daddr: an address, a prefix and a set of both', () => {
    expect(read(match('==', payload('ip', 'saddr'), { prefix: { addr: '10.0.0.0', len: 8 } }))).toEqual({
      matches: [{ kind: 'address', field: 'saddr', family: 'ipv4', cidrs: [cidr('10.0.0.0/8')], negated: false }],
      text: 'ip saddr 10.0.0.0/8 return',
    });
    expect(
      read(match('==', payload('ip', 'saddr'), { set: [{ prefix: { addr: '10.0.0.0', len: 8 } }, '192.168.1.1'] })),
    ).toEqual({
      matches: [
        {
          kind: 'address',
          field: 'saddr',
          family: 'ipv4',
          cidrs: [cidr('10.0.0.0/8'), cidr('192.168.1.1/32')],
          negated: false,
        },
      ],
      text: 'ip saddr { 10.0.0.0/8, 192.168.1.1 } return',
    });
    expect(read(match('!=', payload('ip', 'daddr'), '127.0.0.1'))).toEqual({
      matches: [{ kind: 'address', field: 'daddr', family: 'ipv4', cidrs: [cidr('127.0.0.1/32')], negated: true }],
      text: 'ip daddr != 127.0.0.1 return',
    });
  });

  it('ip6 saddr and daddr', () => {
    expect(
      read(match('==', payload('ip6', 'daddr'), { set: ['::1', { prefix: { addr: 'fd00::', len: 64 } }] })),
    ).toEqual({
      matches: [
        {
          kind: 'address',
          field: 'daddr',
          family: 'ipv6',
          cidrs: [cidr('::1/128'), cidr('fd00::/64')],
          negated: false,
        },
      ],
      text: 'ip6 daddr { ::1, fd00::/64 } return',
    });
    expect(read(match('!=', payload('ip6', 'saddr'), '::1'))).toEqual({
      matches: [{ kind: 'address', field: 'saddr', family: 'ipv6', cidrs: [cidr('::1/128')], negated: true }],
      text: 'ip6 saddr != ::1 return',
    });
  });

  it('in an ip table ip addresses are read, in an ip6 table ip6 addresses', () => {
    expect(read(match('==', payload('ip', 'daddr'), '10.0.0.1'), 'ip').matches).toEqual([
      { kind: 'address', field: 'daddr', family: 'ipv4', cidrs: [cidr('10.0.0.1/32')], negated: false },
    ]);
    expect(read(match('==', payload('ip6', 'daddr'), 'fd00::1'), 'ip6').matches).toEqual([
      { kind: 'address', field: 'daddr', family: 'ipv6', cidrs: [cidr('fd00::1/128')], negated: false },
    ]);
  });

  it('an address of the other family than its table (nft refuses the rule) is an unknown match', () => {
    const v6 = match('==', payload('ip6', 'daddr'), 'fd00::1');
    expect(read(v6, 'ip')).toEqual(unknown(v6));
    const v4 = match('==', payload('ip', 'daddr'), '10.0.0.1');
    expect(read(v4, 'ip6')).toEqual(unknown(v4));
  });

  it('address ranges, named sets, an IPv6 address after "ip" and a prefix without its length are unknown matches', () => {
    for (const expression of [
      match('==', payload('ip', 'daddr'), { range: ['10.0.0.1', '10.0.0.9'] }),
      match('==', payload('ip6', 'daddr'), { range: ['fd00::1', 'fd00::9'] }),
      match('==', payload('ip', 'daddr'), '@addrs'),
      match('==', payload('ip', 'daddr'), 'fd00::1'),
      match('==', payload('ip', 'daddr'), { prefix: { addr: '10.0.0.0' } }),
      match('==', payload('ip', 'daddr'), { prefix: { addr: 10, len: 8 } }),
      match('==', payload('ip', 'daddr'), { prefix: { addr: '10.0.0.0', len: '8' } }),
      match('==', payload('ip', 'daddr'), { prefix: { addr: ['10.0.0.0'], len: 8 } }),
      match('==', payload('ip', 'daddr'), { set: [] }),
      match('==', payload('ip', 'daddr'), { set: [null] }),
    ]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: ports', () => {
  const tcp = { kind: 'protocol', protocols: ['tcp'], negated: false } as const;

  it('tcp and udp dport and sport carry their protocol', () => {
    expect(read(match('==', payload('tcp', 'dport'), 15008))).toEqual({
      matches: [
        tcp,
        {
          kind: 'port',
          field: 'dport',
          ports: { kind: 'ranges', ranges: [{ from: 15008, to: 15008 }] },
          negated: false,
        },
      ],
      text: 'tcp dport 15008 return',
    });
    expect(read(match('!=', payload('tcp', 'sport'), 53))).toEqual({
      matches: [
        tcp,
        { kind: 'port', field: 'sport', ports: { kind: 'ranges', ranges: [{ from: 53, to: 53 }] }, negated: true },
      ],
      text: 'tcp sport != 53 return',
    });
    expect(read(match('==', payload('udp', 'sport'), 53)).matches).toEqual([
      { kind: 'protocol', protocols: ['udp'], negated: false },
      { kind: 'port', field: 'sport', ports: { kind: 'ranges', ranges: [{ from: 53, to: 53 }] }, negated: false },
    ]);
    expect(read(match('==', payload('udp', 'dport'), 53))).toEqual({
      matches: [
        { kind: 'protocol', protocols: ['udp'], negated: false },
        { kind: 'port', field: 'dport', ports: { kind: 'ranges', ranges: [{ from: 53, to: 53 }] }, negated: false },
      ],
      text: 'udp dport 53 return',
    });
  });

  it('th dport and sport: any transport protocol with ports; the dependency is never negated', () => {
    const th = { kind: 'protocol', protocols: ['tcp', 'udp', 'sctp', 'udplite'], negated: false };
    expect(read(match('==', payload('th', 'dport'), 53))).toEqual({
      matches: [
        th,
        { kind: 'port', field: 'dport', ports: { kind: 'ranges', ranges: [{ from: 53, to: 53 }] }, negated: false },
      ],
      text: 'th dport 53 return',
    });
    expect(read(match('!=', payload('th', 'sport'), 53))).toEqual({
      matches: [
        th,
        { kind: 'port', field: 'sport', ports: { kind: 'ranges', ranges: [{ from: 53, to: 53 }] }, negated: true },
      ],
      text: 'th sport != 53 return',
    });
  });

  it('a set of 70 port ranges (70 arrays side by side, no deeper than one)', () => {
    const ranges = Array.from({ length: 70 }, (_, index) => ({ from: 1000 + 10 * index, to: 1005 + 10 * index }));
    const port = read(
      match('==', payload('tcp', 'dport'), { set: ranges.map(({ from, to }) => ({ range: [from, to] })) }),
    ).matches[1];
    expect(port).toEqual({ kind: 'port', field: 'dport', ports: { kind: 'ranges', ranges }, negated: false });
  });

  it('ranges and sets, from port 0 to 65535', () => {
    expect(read(match('==', payload('tcp', 'dport'), { range: [1000, 2000] }))).toEqual({
      matches: [
        tcp,
        { kind: 'port', field: 'dport', ports: { kind: 'ranges', ranges: [{ from: 1000, to: 2000 }] }, negated: false },
      ],
      text: 'tcp dport 1000-2000 return',
    });
    expect(read(match('==', payload('tcp', 'dport'), { set: [22, { range: [80, 90] }] }))).toEqual({
      matches: [
        tcp,
        {
          kind: 'port',
          field: 'dport',
          ports: {
            kind: 'ranges',
            ranges: [
              { from: 22, to: 22 },
              { from: 80, to: 90 },
            ],
          },
          negated: false,
        },
      ],
      text: 'tcp dport { 22, 80-90 } return',
    });
    expect(read(match('==', payload('tcp', 'dport'), 0)).matches).toEqual([
      tcp,
      { kind: 'port', field: 'dport', ports: { kind: 'ranges', ranges: [{ from: 0, to: 0 }] }, negated: false },
    ]);
    expect(read(match('==', payload('tcp', 'dport'), { set: [1, 65535] })).matches).toEqual([
      tcp,
      {
        kind: 'port',
        field: 'dport',
        ports: {
          kind: 'ranges',
          ranges: [
            { from: 1, to: 1 },
            { from: 65535, to: 65535 },
          ],
        },
        negated: false,
      },
    ]);
  });

  it('a named set of ports is an unknown match', () => {
    const expression = match('==', payload('tcp', 'dport'), '@ports');
    expect(read(expression)).toEqual(unknown(expression));
  });

  it('ports nft would never print (past 65535, negative, reversed, a range of one bound) are refused', () => {
    for (const right of [
      65536,
      { range: [0, 65536] },
      -1,
      { range: [2000, 1000] },
      { range: [80] },
      { range: [1.5, 10] },
      { set: [] },
      'http',
    ]) {
      const expression = match('==', payload('tcp', 'dport'), right);
      expect(read(expression), JSON.stringify(right)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: matches nft would never print', () => {
  it('a meta or ct key that is not a string is no selector, even one that reads as "mark" or "state"', () => {
    for (const expression of [
      match('==', { meta: { key: ['mark'] } }, 1),
      match('in', { ct: { key: ['state'] } }, 'new'),
    ]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });

  it('a match without a right-hand side, or without a left, is an unknown match', () => {
    for (const expression of [{ match: { op: '==', left: meta('l4proto') } }, { match: { op: '==', right: 'tcp' } }]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });
});

describe('nft match: selectors the engine does not model', () => {
  it('meta protocol, tcp flags and a concatenation are unknown matches', () => {
    for (const expression of [match('==', meta('protocol'), 'ip'), match('in', payload('tcp', 'flags'), 'syn')]) {
      expect(read(expression)).toEqual(unknown(expression));
    }
  });

  it('a concatenation is an unknown match, quoted to its first 117 characters', () => {
    const concat = match(
      '==',
      { concat: [payload('ip', 'saddr'), payload('tcp', 'dport')] },
      { set: [{ concat: ['10.0.0.1', 80] }] },
    );
    const quoted =
      '{"match":{"op":"==","left":{"concat":[{"payload":{"protocol":"ip","field":"saddr"}},{"payload":{"protocol":"tcp","fie...';
    expect(read(concat)).toEqual({ matches: [{ kind: 'unknown', text: quoted }], text: `${quoted} return` });
  });
});
