import { describe, expect, it } from 'vitest';
import { describeRegion, regionJson, type RegionScope } from '../../src/expect/region-text.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import { subtractSets } from '../../src/trace/interval-set.js';
import { ANY_MARK, markCube, subtractMarks, ZERO_MARK } from '../../src/trace/mark-set.js';
import { ALL_IDS, ALL_PORTS_SET, allAddresses, cidrSpan } from '../../src/trace/match-constraint.js';
import type { Region } from '../../src/trace/region.js';

// The exact words (and JSON terms) a finding uses to name the packets that escape interception,
// word by word.

/** As a ruleset with `-o eth0`, `-i eth+` and the kernel's `lo` cuts the interface names. */
const atoms = buildInterfaceAtoms(['eth0', 'eth+', 'lo']);
/** Atom bits, in the order buildInterfaceAtoms sorts them. */
const ETH_OTHER = 1n;
const ETH0 = 2n;
const LO = 4n;
const OTHER = 8n;

const output4: RegionScope = { family: 'ipv4', hook: 'output', atoms };
const prerouting4: RegionScope = { family: 'ipv4', hook: 'prerouting', atoms };
const output6: RegionScope = { family: 'ipv6', hook: 'output', atoms };
const prerouting6: RegionScope = { family: 'ipv6', hook: 'prerouting', atoms };

/** The space verify.ts traces from: TCP, new connections, any mark from a local socket, none from outside. */
function space(scope: RegionScope, narrowed: Partial<Region> = {}): Region {
  const all = allAddresses(scope.family);
  const mark = scope.hook === 'output' ? ANY_MARK : ZERO_MARK;
  return {
    protocols: 1,
    saddr: all,
    daddr: all,
    sport: ALL_PORTS_SET,
    dport: ALL_PORTS_SET,
    uid: ALL_IDS,
    gid: ALL_IDS,
    iface: atoms.all,
    mark,
    ctmark: ZERO_MARK,
    ctstates: 1,
    ...narrowed,
  };
}

const ports = (...list: Array<number | [number, number]>) =>
  list.map((p) =>
    typeof p === 'number' ? ([BigInt(p), BigInt(p)] as const) : ([BigInt(p[0]), BigInt(p[1])] as const),
  );

describe('describeRegion: what a whole field says', () => {
  it('the whole outbound space names nothing but its protocol', () => {
    expect(describeRegion(space(output4), output4)).toBe('outbound TCP to any address, any port, from any uid');
  });

  it('the whole inbound space, with or without the loopback destinations it never gets, names no destination', () => {
    expect(describeRegion(space(prerouting4), prerouting4)).toBe('inbound TCP from any address to any port');
    const notLoopback4 = subtractSets(allAddresses('ipv4'), cidrSpan(0x7f000000n, 8, 'ipv4'));
    expect(describeRegion(space(prerouting4, { daddr: notLoopback4 }), prerouting4)).toBe(
      'inbound TCP from any address to any port',
    );
    const notLoopback6 = subtractSets(allAddresses('ipv6'), [[1n, 1n]]);
    expect(describeRegion(space(prerouting6, { daddr: notLoopback6 }), prerouting6)).toBe(
      'inbound TCP from any address to any port',
    );
  });

  it('an inbound region for some destinations names them after its port', () => {
    expect(describeRegion(space(prerouting4, { daddr: cidrSpan(0x0a000000n, 8, 'ipv4') }), prerouting4)).toBe(
      'inbound TCP from any address to any port, for 10.0.0.0/8',
    );
    expect(describeRegion(space(prerouting6, { daddr: cidrSpan(0xfd00n << 112n, 8, 'ipv6') }), prerouting6)).toBe(
      'inbound TCP from any address to any port, for fd00::/8',
    );
  });

  it('TCP and UDP together (captured DNS)', () => {
    expect(describeRegion(space(output4, { protocols: 3, dport: ports(53) }), output4)).toBe(
      'outbound TCP and UDP to any address, port 53, from any uid',
    );
    expect(describeRegion(space(output4, { protocols: 2, dport: ports(53) }), output4)).toBe(
      'outbound UDP to any address, port 53, from any uid',
    );
  });
});

describe('describeRegion: addresses as the fewest CIDRs', () => {
  it('a block aligned at 0 that is not the whole space', () => {
    expect(describeRegion(space(output4, { daddr: [[0n, 2n]] }), output4)).toBe(
      'outbound TCP to 0.0.0.0/31, 0.0.0.2/32, any port, from any uid',
    );
  });

  it('a misaligned range splits at each alignment', () => {
    expect(describeRegion(space(output4, { daddr: [[0x0a000001n, 0x0a000006n]] }), output4)).toBe(
      'outbound TCP to 10.0.0.1/32, 10.0.0.2/31, 10.0.0.4/31, 10.0.0.6/32, any port, from any uid',
    );
  });

  it('one address is still a CIDR, with no noun before it', () => {
    expect(describeRegion(space(output6, { daddr: [[1n, 1n]] }), output6)).toBe(
      'outbound TCP to ::1/128, any port, from any uid',
    );
    expect(describeRegion(space(prerouting6, { saddr: [[1n, 1n]] }), prerouting6)).toBe(
      'inbound TCP from ::1/128 to any port',
    );
  });

  it('the complement of one block is "any address but" it', () => {
    const notTen = subtractSets(allAddresses('ipv4'), cidrSpan(0x0a000000n, 8, 'ipv4'));
    expect(describeRegion(space(output4, { daddr: notTen }), output4)).toBe(
      'outbound TCP to any address but 10.0.0.0/8, any port, from any uid',
    );
  });

  it('more than six blocks are counted', () => {
    const scattered = [0, 2, 4, 6, 8, 10, 12].map((i) => [0x0a000000n + BigInt(i), 0x0a000000n + BigInt(i)] as const);
    expect(describeRegion(space(output4, { daddr: scattered }), output4)).toBe(
      'outbound TCP to 10.0.0.0/32, 10.0.0.2/32, 10.0.0.4/32, 10.0.0.6/32, 10.0.0.8/32, 10.0.0.10/32, ... (7 in all), any port, from any uid',
    );
  });
});

describe('describeRegion: ports, uids and gids, listed or as "any but"', () => {
  const sentence = (dport: Region['dport']) => describeRegion(space(output4, { dport }), output4);

  it('one port takes the singular, a range or a list the plural', () => {
    expect(sentence(ports(8080))).toBe('outbound TCP to any address, port 8080, from any uid');
    expect(sentence(ports([8080, 8081]))).toBe('outbound TCP to any address, ports 8080-8081, from any uid');
    expect(sentence(ports(80, 443))).toBe('outbound TCP to any address, ports 80, 443, from any uid');
  });

  it('all but a few ports: "any port but", up to three of them', () => {
    expect(sentence(subtractSets(ALL_PORTS_SET, ports([4190, 4191])))).toBe(
      'outbound TCP to any address, any port but 4190-4191, from any uid',
    );
    expect(sentence(ports(1, 3, 5, [7, 65535]))).toBe(
      'outbound TCP to any address, any port but 2, 4, 6, from any uid',
    );
  });

  it('four left out is a list again, and so is a tie', () => {
    expect(sentence(ports(2, 4, 6, [8, 65535]))).toBe(
      'outbound TCP to any address, ports 2, 4, 6, 8-65535, from any uid',
    );
    expect(sentence(ports([2, 79], [81, 65535]))).toBe(
      'outbound TCP to any address, ports 2-79, 81-65535, from any uid',
    );
  });

  it('six ports are listed whole; the seventh turns into a count', () => {
    expect(sentence(ports(1, 3, 5, 7, 9, [11, 65535]))).toBe(
      'outbound TCP to any address, ports 1, 3, 5, 7, 9, 11-65535, from any uid',
    );
    expect(sentence(ports(1, 3, 5, 7, 9, 11, 13))).toBe(
      'outbound TCP to any address, ports 1, 3, 5, 7, 9, 11, ... (7 in all), from any uid',
    );
  });

  it('uids: one, all but one, a list', () => {
    const uid = (set: Region['uid']) => describeRegion(space(output4, { uid: set }), output4);
    expect(uid(ports(2102))).toBe('outbound TCP to any address, any port, from uid 2102');
    expect(uid(subtractSets(ALL_IDS, ports(2102)))).toBe(
      'outbound TCP to any address, any port, from any uid but 2102',
    );
    expect(uid(ports(2102, 2104))).toBe('outbound TCP to any address, any port, from uids 2102, 2104');
  });

  it('gids are named only when narrowed, after the uid', () => {
    const gid = (set: Region['gid']) => describeRegion(space(output4, { gid: set }), output4);
    expect(gid(ports(1337))).toBe('outbound TCP to any address, any port, from any uid, gid 1337');
    expect(gid(ports(1337, [1339, 1340]))).toBe(
      'outbound TCP to any address, any port, from any uid, gids 1337, 1339-1340',
    );
    expect(gid(subtractSets(ALL_IDS, ports(1337)))).toBe(
      'outbound TCP to any address, any port, from any uid, any gid but 1337',
    );
  });

  it('source ports are named only when narrowed', () => {
    expect(describeRegion(space(output4, { sport: ports([1000, 2000]) }), output4)).toBe(
      'outbound TCP to any address, any port, from any uid, from source ports 1000-2000',
    );
    expect(describeRegion(space(prerouting4, { sport: ports(53) }), prerouting4)).toBe(
      'inbound TCP from any address to any port, from source port 53',
    );
  });
});

describe('describeRegion: interfaces, sources, marks and conntrack states', () => {
  it('interfaces: the fewer words, "via" outbound and "on" inbound', () => {
    expect(describeRegion(space(output4, { iface: ETH0 }), output4)).toBe(
      'outbound TCP to any address, any port, from any uid, via eth0',
    );
    expect(describeRegion(space(output4, { iface: ETH_OTHER | ETH0 | OTHER }), output4)).toBe(
      'outbound TCP to any address, any port, from any uid, via any interface but lo',
    );
    // Two inside, two outside: "any but" wins the tie.
    expect(describeRegion(space(prerouting4, { iface: ETH0 | LO }), prerouting4)).toBe(
      'inbound TCP from any address to any port, on any interface but eth+ (other), any other interface',
    );
    expect(describeRegion(space(prerouting4, { iface: ETH_OTHER }), prerouting4)).toBe(
      'inbound TCP from any address to any port, on eth+ (other)',
    );
  });

  it('two interfaces of six are listed by name', () => {
    const six = buildInterfaceAtoms(['eth0', 'eth1', 'eth+', 'lo', 'wg0']);
    expect(six.atoms.map((atom) => atom.label)).toEqual([
      'eth+ (other)',
      'eth0',
      'eth1',
      'lo',
      'wg0',
      'any other interface',
    ]);
    const scope: RegionScope = { ...output4, atoms: six };
    expect(describeRegion({ ...space(output4), iface: 0b000110n }, scope)).toBe(
      'outbound TCP to any address, any port, from any uid, via eth0, eth1',
    );
    expect(describeRegion({ ...space(output4), iface: 0b111001n }, scope)).toBe(
      'outbound TCP to any address, any port, from any uid, via any interface but eth0, eth1',
    );
  });

  it('an outbound source address is named (the passthrough source), after the interface', () => {
    expect(describeRegion(space(output4, { iface: LO, saddr: [[0x7f000006n, 0x7f000006n]] }), output4)).toBe(
      'outbound TCP to any address, any port, from any uid, via lo, from source 127.0.0.6/32',
    );
  });

  it('a mark is named unless it is any (outbound) or none (inbound)', () => {
    expect(describeRegion(space(output4, { mark: markCube(0x539, 0xffff) }), output4)).toBe(
      'outbound TCP to any address, any port, from any uid, mark 0x539/0xffff',
    );
    expect(describeRegion(space(prerouting4, { mark: markCube(0x539, 0xffffffff) }), prerouting4)).toBe(
      'inbound TCP from any address to any port, mark 0x539',
    );
    // Every mark but 0x0/0x3 (as a RETURN on that mark leaves them): one cube per bit, joined by "or".
    expect(describeRegion(space(output4, { mark: subtractMarks(ANY_MARK, markCube(0, 3)) }), output4)).toBe(
      'outbound TCP to any address, any port, from any uid, mark 0x1/0x1 or 0x2/0x3',
    );
  });

  it('conntrack states are named unless the region is new connections only', () => {
    expect(describeRegion(space(prerouting4, { ctstates: 8 }), prerouting4)).toBe(
      'inbound TCP from any address to any port, conntrack INVALID',
    );
    expect(describeRegion(space(prerouting4, { ctstates: 1 | 8 }), prerouting4)).toBe(
      'inbound TCP from any address to any port, conntrack NEW, INVALID',
    );
  });

  it('every extra at once, in order: gid, interface, source, source port, mark, states', () => {
    const region = space(output4, {
      protocols: 3,
      daddr: [[0x0a000001n, 0x0a000006n]],
      dport: ports(80, 443),
      uid: subtractSets(ALL_IDS, ports(2102)),
      gid: ports(5),
      iface: ETH0,
      saddr: cidrSpan(0xc0a80000n, 16, 'ipv4'),
      sport: ports([1000, 2000]),
      mark: markCube(0x539, 0xffff),
      ctstates: 1 | 8,
    });
    expect(describeRegion(region, output4)).toBe(
      'outbound TCP and UDP to 10.0.0.1/32, 10.0.0.2/31, 10.0.0.4/31, 10.0.0.6/32, ports 80, 443, from any uid but 2102, gid 5, via eth0, from source 192.168.0.0/16, from source ports 1000-2000, mark 0x539/0xffff, conntrack NEW, INVALID',
    );
  });
});

describe('regionJson: every field as terms', () => {
  it('an outbound region lists uid, gid and the out interface', () => {
    expect(regionJson(space(output4), output4)).toEqual({
      protocols: ['tcp'],
      saddr: ['0.0.0.0/0'],
      daddr: ['0.0.0.0/0'],
      sport: ['1-65535'],
      dport: ['1-65535'],
      uid: ['0-4294967295'],
      gid: ['0-4294967295'],
      oif: ['eth+ (other)', 'eth0', 'lo', 'any other interface'],
      mark: ['any'],
      ctmark: ['0x0'],
      ctstates: ['new'],
    });
  });

  it('an inbound region has no owner and lists the in interface', () => {
    expect(
      regionJson(space(prerouting4, { iface: ETH0 | OTHER, dport: ports(80, [8080, 8081]) }), prerouting4),
    ).toEqual({
      protocols: ['tcp'],
      saddr: ['0.0.0.0/0'],
      daddr: ['0.0.0.0/0'],
      sport: ['1-65535'],
      dport: ['80', '8080-8081'],
      iif: ['eth0', 'any other interface'],
      mark: ['0x0'],
      ctmark: ['0x0'],
      ctstates: ['new'],
    });
  });

  it('IPv6 blocks, UDP, every state and a masked mark', () => {
    const region = space(output6, {
      protocols: 2,
      saddr: [[0n, 2n]],
      daddr: [[1n, 1n]],
      uid: ports(5, [7, 9]),
      iface: ETH0 | OTHER,
      mark: markCube(0x539, 0xffff),
      ctmark: markCube(1, 1),
      ctstates: 31,
    });
    expect(regionJson(region, output6)).toEqual({
      protocols: ['udp'],
      saddr: ['::/127', '::2/128'],
      daddr: ['::1/128'],
      sport: ['1-65535'],
      dport: ['1-65535'],
      uid: ['5', '7-9'],
      gid: ['0-4294967295'],
      oif: ['eth0', 'any other interface'],
      mark: ['0x539/0xffff'],
      ctmark: ['0x1/0x1'],
      ctstates: ['new', 'established', 'related', 'invalid', 'untracked'],
    });
    expect(regionJson(space(prerouting6), prerouting6)).toMatchObject({ saddr: ['::/0'], daddr: ['::/0'] });
  });
});
