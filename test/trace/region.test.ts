import { connectionSpace } from '../../src/trace/connection-space.js';
import { describe, expect, it } from 'vitest';
import { parseIp } from '../../src/addr/ip.js';
import { span, type IntervalSet } from '../../src/trace/interval-set.js';
import { ANY_MARK, markCube, ZERO_MARK } from '../../src/trace/mark-set.js';
import { ALL_PORTS_SET, cidrSpan } from '../../src/trace/match-constraint.js';
import {
  andConstraints,
  bitsOf,
  coalesce,
  CT_STATES,
  intersect,
  narrowing,
  overlaps,
  PROTOCOLS,
  splitRegion,
  subtract,
  type Region,
} from '../../src/trace/region.js';

// How a region is cut by a constraint field by field (bit sets, interface atoms, intervals, mark
// cubes), which copies are shared, and how pieces are joined back for a report.

const address = (text: string): bigint => (parseIp(text) as { value: bigint }).value;
const cidr = (text: string): IntervalSet => {
  const [base, prefix] = text.split('/');
  return cidrSpan(address(base as string), Number(prefix), 'ipv4');
};
const port = (from: number, to = from): IntervalSet => span(BigInt(from), BigInt(to));

/** The IPv4 OUTPUT space as the outbound checks start it: TCP and UDP, three interface atoms, any mark, state NEW. */
const SPACE: Region = { ...connectionSpace('ipv4', 0b111n), protocols: 0b11 };
const TCP = bitsOf(PROTOCOLS, ['tcp']);
const UDP = bitsOf(PROTOCOLS, ['udp']);
/** A region with one field changed. */
const with_ = (over: Partial<Region>, base: Region = SPACE): Region => ({ ...base, ...over });

describe('bitsOf: names to bits, in the order of the universe', () => {
  it('sets exactly the bits of the members named', () => {
    expect(bitsOf(CT_STATES, ['established', 'invalid'])).toBe(0b01010);
    expect(bitsOf(PROTOCOLS, ['udp'])).toBe(0b10);
    expect(bitsOf(PROTOCOLS, ['icmp', 'sctp'])).toBe(0);
  });
});

describe('overlaps: whether any packet of the region meets every field of the constraint', () => {
  const tcpOnLoopback = with_({
    protocols: TCP,
    iface: 0b010n,
    mark: markCube(0x539, 0xffffffff),
    ctstates: bitsOf(CT_STATES, ['new']),
  });

  it('bit sets (protocols, conntrack states) meet only on a common bit', () => {
    expect(overlaps(tcpOnLoopback, { protocols: UDP })).toBe(false);
    expect(overlaps(tcpOnLoopback, { protocols: TCP | UDP })).toBe(true);
    expect(overlaps(tcpOnLoopback, { ctstates: bitsOf(CT_STATES, ['established', 'related']) })).toBe(false);
    expect(overlaps(tcpOnLoopback, { ctstates: bitsOf(CT_STATES, ['new', 'related']) })).toBe(true);
  });

  it('interface atoms meet only on a common atom', () => {
    expect(overlaps(tcpOnLoopback, { iface: 0b101n })).toBe(false);
    expect(overlaps(tcpOnLoopback, { iface: 0b011n })).toBe(true);
  });

  it('mark cubes meet only where the masked bits agree', () => {
    expect(overlaps(tcpOnLoopback, { mark: markCube(0x500, 0xf00) })).toBe(true);
    expect(overlaps(tcpOnLoopback, { mark: markCube(0x600, 0xf00) })).toBe(false);
  });

  it('interval fields meet on a common value', () => {
    expect(overlaps(with_({ dport: port(80) }), { dport: port(81, 443) })).toBe(false);
    expect(overlaps(with_({ dport: port(80) }), { dport: port(1, 80) })).toBe(true);
  });

  it('every field must meet: one that does not is enough to answer no; no field at all is yes', () => {
    expect(overlaps(tcpOnLoopback, { dport: port(80), protocols: UDP })).toBe(false);
    expect(overlaps(tcpOnLoopback, { protocols: UDP, dport: port(80) })).toBe(false);
    expect(overlaps(tcpOnLoopback, { protocols: TCP, dport: port(80), iface: 0b010n })).toBe(true);
    expect(overlaps(tcpOnLoopback, {})).toBe(true);
  });
});

describe('intersect: the region inside a constraint', () => {
  it('narrows each constrained field of every kind, in one copy, leaving the region as it was', () => {
    const before = structuredClone(SPACE);
    const inside = intersect(SPACE, {
      protocols: TCP,
      iface: 0b110n,
      mark: markCube(0x539, 0xfff),
      ctstates: 0b11,
      dport: port(15001),
      daddr: cidr('10.0.0.0/8'),
    });
    expect(inside).toEqual(
      with_({
        protocols: TCP,
        iface: 0b110n,
        mark: markCube(0x539, 0xfff),
        dport: port(15001),
        daddr: cidr('10.0.0.0/8'),
      }),
    );
    expect(SPACE).toEqual(before);
  });

  it('a constraint that narrows nothing gives back the very same region, uncopied', () => {
    expect(intersect(SPACE, { protocols: 0b11, iface: 0b111n, dport: ALL_PORTS_SET, mark: ANY_MARK })).toBe(SPACE);
  });

  it('a field with no value left makes the whole intersection empty, whatever its kind', () => {
    const region = with_({ protocols: TCP, iface: 0b001n, mark: ZERO_MARK, dport: port(80) });
    expect(intersect(region, { protocols: UDP })).toBeUndefined();
    expect(intersect(region, { iface: 0b110n })).toBeUndefined();
    expect(intersect(region, { mark: markCube(0x1, 0x1) })).toBeUndefined();
    expect(intersect(region, { ctstates: 0b10 })).toBeUndefined();
    expect(intersect(region, { dport: port(443) })).toBeUndefined();
    expect(intersect(region, { daddr: cidr('10.0.0.0/8'), dport: port(443) })).toBeUndefined();
  });
});

describe('splitRegion and subtract: the region inside a constraint and the disjoint rest', () => {
  it('one piece outside per narrowed field, each inside the fields before it', () => {
    const parts = splitRegion(SPACE, { protocols: TCP, dport: port(80), daddr: cidr('10.0.0.0/8') });
    const tcp80 = with_({ protocols: TCP, dport: port(80) });
    expect(parts).toEqual({
      inside: with_({ daddr: cidr('10.0.0.0/8') }, tcp80),
      outside: [
        with_({ protocols: UDP }),
        with_({ protocols: TCP, dport: span(1n, 79n).concat(span(81n, 65535n)) }),
        with_(
          { daddr: span(0n, address('9.255.255.255')).concat(span(address('11.0.0.0'), address('255.255.255.255'))) },
          tcp80,
        ),
      ],
    });
    expect(subtract(SPACE, { protocols: TCP, dport: port(80), daddr: cidr('10.0.0.0/8') })).toEqual(parts.outside);
  });

  it('interface atoms, marks and conntrack states are cut the same way', () => {
    const parts = splitRegion(SPACE, { iface: 0b010n, mark: markCube(0x2, 0x2) });
    expect(parts).toEqual({
      inside: with_({ iface: 0b010n, mark: [{ care: 0x2, bits: 0x2 }] }),
      outside: [with_({ iface: 0b101n }), with_({ iface: 0b010n, mark: [{ care: 0x2, bits: 0 }] })],
    });
    expect(splitRegion(with_({ ctstates: 0b11 }), { ctstates: 0b10 })).toEqual({
      inside: with_({ ctstates: 0b10 }),
      outside: [with_({ ctstates: 0b01 })],
    });
  });

  it('a field the region lies wholly inside adds no piece, and a constraint that narrows nothing gives back the region itself', () => {
    const region = with_({ dport: port(80) });
    const parts = splitRegion(region, { protocols: 0b11, dport: port(1, 1024), iface: 0b111n });
    expect(parts.outside).toEqual([]);
    expect(parts.inside).toBe(region);
    expect(subtract(region, { dport: port(1, 1024) })).toEqual([]);
  });

  it('a field the region misses wholly ends the split: nothing inside, the region outside once', () => {
    const region = with_({ protocols: TCP, dport: port(80) });
    expect(splitRegion(region, { dport: port(443), protocols: TCP })).toEqual({ inside: undefined, outside: [region] });
    expect(splitRegion(region, { protocols: TCP, dport: port(443) })).toEqual({ inside: undefined, outside: [region] });
    expect(splitRegion(region, { protocols: UDP, dport: port(443) })).toEqual({ inside: undefined, outside: [region] });
    // A miss after a narrowing field: the narrowed part is the last piece outside.
    expect(splitRegion(SPACE, { protocols: TCP, iface: 0n })).toEqual({
      inside: undefined,
      outside: [with_({ protocols: UDP }), with_({ protocols: TCP })],
    });
  });
});

describe('narrowing: the fields in which a region is narrower than the space', () => {
  it('names exactly the fields that differ, of every kind', () => {
    expect(narrowing(SPACE, SPACE)).toEqual({});
    const region = with_({ protocols: TCP, iface: 0b001n, mark: ZERO_MARK, ctstates: 0b10, dport: port(80) });
    expect(narrowing(region, SPACE)).toEqual({
      protocols: TCP,
      dport: port(80),
      iface: 0b001n,
      mark: ZERO_MARK,
      ctstates: 0b10,
    });
  });
});

describe('coalesce: regions that differ in one joinable field become one', () => {
  it('joins bit sets, interface atoms and intervals; an identical region is absorbed', () => {
    expect(coalesce([with_({ protocols: TCP }), with_({ protocols: UDP })])).toEqual([SPACE]);
    expect(coalesce([with_({ iface: 0b001n }), with_({ iface: 0b100n })])).toEqual([with_({ iface: 0b101n })]);
    expect(coalesce([with_({ dport: port(80) }), with_({ dport: port(443) })])).toEqual([
      with_({ dport: port(80).concat(port(443)) }),
    ]);
    expect(coalesce([SPACE, SPACE])).toEqual([SPACE]);
    expect(coalesce([])).toEqual([]);
    expect(coalesce([SPACE])).toEqual([SPACE]);
  });

  it('keeps apart regions that differ in two fields, or in marks (a union of cubes is rarely a cube)', () => {
    const two = [with_({ dport: port(80) }), with_({ dport: port(443), daddr: cidr('10.0.0.0/8') })];
    expect(coalesce(two)).toEqual(two);
    const marks = [with_({ mark: markCube(0, 1) }), with_({ mark: markCube(1, 1) })];
    expect(coalesce(marks)).toEqual(marks);
    const marksAndPorts = [
      with_({ mark: markCube(0, 1), dport: port(80) }),
      with_({ mark: markCube(1, 1), dport: port(443) }),
    ];
    expect(coalesce(marksAndPorts)).toEqual(marksAndPorts);
  });

  it('after each join it starts over from the first region, so the joined region meets the next one first', () => {
    const p = cidr('10.0.0.0/8');
    const q = cidr('192.168.0.0/16');
    const a = with_({ daddr: p, dport: port(80) });
    const b = with_({ daddr: p, dport: port(443) });
    const c = with_({ daddr: q, dport: port(80).concat(port(443)) });
    const d = with_({ daddr: p, dport: port(8080) });
    // a+b, then (a+b)+c on the addresses; d differs from that in two fields. Skipping ahead
    // after the first join would pair a+b with d instead and leave c alone.
    expect(coalesce([a, b, c, d])).toEqual([with_({ daddr: p.concat(q), dport: port(80).concat(port(443)) }), d]);
    expect(coalesce([d, a, c, b])).toEqual([with_({ daddr: p, dport: port(80).concat(port(443), port(8080)) }), c]);
  });
});

describe('andConstraints: both constraints at once', () => {
  it('keeps the fields of each and intersects a field both constrain', () => {
    expect(
      andConstraints({ dport: port(1, 100), protocols: TCP }, { daddr: cidr('10.0.0.0/8'), dport: port(50, 200) }),
    ).toEqual({ dport: port(50, 100), protocols: TCP, daddr: cidr('10.0.0.0/8') });
    expect(andConstraints({}, { iface: 0b10n })).toEqual({ iface: 0b10n });
  });

  it('is undefined when a field both constrain has nothing in common', () => {
    expect(andConstraints({ dport: port(80), protocols: TCP }, { protocols: UDP })).toBeUndefined();
    expect(
      andConstraints({ mark: markCube(1, 1) }, { daddr: cidr('10.0.0.0/8'), mark: markCube(0, 1) }),
    ).toBeUndefined();
  });
});
