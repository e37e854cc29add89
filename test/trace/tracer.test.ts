import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { mergeRuleSources } from '../../src/rules/merge.js';
import type { Provenance, Ruleset } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { tracePacket } from '../../src/trace/trace.js';
import { inboundPacket as inbound, ip, outboundPacket as out } from './sample-packets.js';

function nat(
  rules: string[],
  backend: 'iptables-nft' | 'iptables-legacy' = 'iptables-nft',
  chains: string[] = ['MESH'],
): Ruleset {
  const text = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ...chains.map((c) => `:${c} - [0:0]`),
    ...rules,
    'COMMIT',
    '',
  ].join('\n');
  const parsed = parseIptablesSave(text, { backend, family: 'ipv4', source: 't' });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { tables: parsed.tables };
}

/** The nat table with only the given user chains declared. */
function natWith(rules: string[], chains: string[] = []): Ruleset {
  return nat(rules, 'iptables-nft', chains);
}

describe('tracer semantics', () => {
  it('a DNAT to an address is answered, not thrown on (its address holds a bigint)', () => {
    const rules = nat(['-A OUTPUT -p tcp -j DNAT --to-destination 10.96.0.11:8081'], 'iptables-nft', []);
    expect(tracePacket(rules, out()).outcome).toEqual({ kind: 'dnat', address: ip('10.96.0.11'), port: 8081 });
  });

  it('follows jump and return, and REDIRECT with its port', () => {
    const rules = nat([
      '-A OUTPUT -j MESH',
      '-A MESH -m owner --uid-owner 2102 -j RETURN',
      '-A MESH -p tcp -j REDIRECT --to-ports 4140',
    ]);
    expect(tracePacket(rules, out()).outcome).toEqual({ kind: 'redirect', port: 4140 });
    const proxy = tracePacket(rules, out({ uid: 2102 }));
    expect(proxy.outcome.kind).toBe('accept');
    expect(proxy.decidedBy?.text).toContain('--uid-owner 2102');
  });

  it('negated owner, multiport ranges and CIDRs', () => {
    const rules = nat([
      '-A OUTPUT -j MESH',
      '-A MESH -p tcp -m multiport ! --dports 20000:20100,443 -d 192.0.2.0/24 -m owner ! --uid-owner 5 -j REDIRECT --to-ports 1',
    ]);
    expect(tracePacket(rules, out()).outcome).toEqual({ kind: 'redirect', port: 1 });
    expect(tracePacket(rules, out({ destinationPort: 20100 })).outcome.kind).toBe('accept');
    expect(tracePacket(rules, out({ destinationPort: 20101 })).outcome.kind).toBe('redirect');
    expect(tracePacket(rules, out({ uid: 5 })).outcome.kind).toBe('accept');
    expect(tracePacket(rules, out({ destination: ip('198.51.100.1') })).outcome.kind).toBe('accept');
  });

  it('goto returns to the caller of the chain that jumped', () => {
    const rules = nat(
      ['-A OUTPUT -j A', '-A OUTPUT -j REDIRECT --to-ports 9', '-A A -g B', '-A A -j REDIRECT --to-ports 7'],
      'iptables-nft',
      ['A', 'B'],
    );
    expect(tracePacket(rules, out()).outcome).toEqual({ kind: 'redirect', port: 9 });
  });

  it('an unknown match that decides the outcome makes it unknown, naming the rule', () => {
    const rules = nat([
      '-A OUTPUT -m addrtype --dst-type LOCAL -j RETURN',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
    ]);
    const result = tracePacket(rules, out());
    expect(result.outcome.kind).toBe('unknown');
    expect(result.outcome.kind === 'unknown' && result.outcome.rule?.text).toContain('addrtype');
  });

  it('an unknown match that cannot change the outcome does not matter', () => {
    const rules = nat([
      '-A OUTPUT -m addrtype --dst-type LOCAL -j REDIRECT --to-ports 4140',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
    ]);
    expect(tracePacket(rules, out()).outcome).toEqual({ kind: 'redirect', port: 4140 });
  });

  it('two backends at the same priority that NAT differently are unknown; the same way is fine', () => {
    const a = nat(['-A OUTPUT -p tcp -j REDIRECT --to-ports 4140'], 'iptables-nft');
    const b = nat(['-A OUTPUT -p tcp -j REDIRECT --to-ports 15001'], 'iptables-legacy');
    const same = nat(['-A OUTPUT -p tcp -j REDIRECT --to-ports 4140'], 'iptables-legacy');
    expect(tracePacket({ tables: [...a.tables, ...b.tables] }, out()).outcome.kind).toBe('unknown');
    expect(tracePacket({ tables: [...a.tables, ...same.tables] }, out()).outcome).toEqual({
      kind: 'redirect',
      port: 4140,
    });
    // One backend leaving the packet alone does not stop the other from redirecting it.
    const empty = nat([], 'iptables-legacy');
    expect(tracePacket({ tables: [...empty.tables, ...a.tables] }, out()).outcome).toEqual({
      kind: 'redirect',
      port: 4140,
    });
  });

  it('nft: sets, ranges, !=, skuid and inet family dependencies', () => {
    const json = JSON.stringify({
      nftables: [
        { table: { family: 'inet', name: 't', handle: 1 } },
        {
          chain: {
            family: 'inet',
            table: 't',
            name: 'out',
            handle: 1,
            type: 'nat',
            hook: 'output',
            prio: -100,
            policy: 'accept',
          },
        },
        {
          rule: {
            family: 'inet',
            table: 't',
            chain: 'out',
            handle: 2,
            expr: [{ match: { op: '==', left: { meta: { key: 'skuid' } }, right: 1337 } }, { return: null }],
          },
        },
        {
          rule: {
            family: 'inet',
            table: 't',
            chain: 'out',
            handle: 3,
            expr: [
              { match: { op: '!=', left: { payload: { protocol: 'ip6', field: 'daddr' } }, right: '::1' } },
              { redirect: { port: 6 } },
            ],
          },
        },
        {
          rule: {
            family: 'inet',
            table: 't',
            chain: 'out',
            handle: 4,
            expr: [
              {
                match: {
                  op: '!=',
                  left: { payload: { protocol: 'tcp', field: 'dport' } },
                  right: { set: [53, { range: [1000, 2000] }] },
                },
              },
              { redirect: { port: 15001 } },
            ],
          },
        },
      ],
    });
    const parsed = parseNftJson(json, 'j');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const ruleset = mergeRuleSources([{ backend: 'nftables', tables: parsed.tables }]).ruleset;
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
    expect(tracePacket(ruleset, out({ destinationPort: 1500 })).outcome.kind).toBe('accept');
    expect(tracePacket(ruleset, out({ uid: 1337 })).outcome.kind).toBe('accept');
  });
});

/** The provenance of rule `position` of `chain`, as the parser records it (with its dump line). */
function at(ruleset: Ruleset, chain: string, position: number): Provenance {
  const rule = ruleset.tables[0]?.chains.get(chain)?.rules[position - 1];
  if (!rule) throw new Error(`no rule ${chain} #${position}`);
  return rule.provenance;
}

describe('tracePacket: the packet becomes a region of exactly itself', () => {
  it('OUTPUT tests the out interface, PREROUTING the in interface', () => {
    const output = natWith(['-A OUTPUT -o eth0 -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001']);
    expect(tracePacket(output, out())).toEqual({
      outcome: { kind: 'accept' },
      path: [
        { at: at(output, 'OUTPUT', 1), effect: 'return' },
        {
          at: {
            backend: 'iptables-nft',
            family: 'ipv4',
            table: 'nat',
            chain: 'OUTPUT',
            position: 0,
            text: 'policy ACCEPT of OUTPUT',
          },
          effect: 'policy',
        },
      ],
      decidedBy: at(output, 'OUTPUT', 1),
    });
    expect(tracePacket(output, out({ outInterface: 'eth1', inInterface: 'eth0' })).outcome).toEqual({
      kind: 'redirect',
      port: 15001,
    });
    const prerouting = natWith([
      '-A PREROUTING -i eth0 -j RETURN',
      '-A PREROUTING -p tcp -j REDIRECT --to-ports 15006',
    ]);
    expect(tracePacket(prerouting, inbound()).outcome).toEqual({ kind: 'accept' });
    expect(tracePacket(prerouting, inbound({ inInterface: 'eth1', outInterface: 'eth0' })).outcome).toEqual({
      kind: 'redirect',
      port: 15006,
    });
  });

  it('a packet with no interface on its side has the empty name', () => {
    const ruleset = natWith(['-A OUTPUT ! -o lo -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001']);
    expect(tracePacket(ruleset, out({ outInterface: undefined })).outcome).toEqual({ kind: 'accept' });
    expect(tracePacket(ruleset, out({ outInterface: 'lo' })).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('no interface is the empty name, which no wildcard with a prefix matches', () => {
    const ruleset = natWith(['-A OUTPUT -o S+ -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001']);
    expect(tracePacket(ruleset, out({ outInterface: undefined })).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('the source and destination address and port of the packet', () => {
    const ruleset = natWith([
      '-A OUTPUT -s 127.0.0.6/32 -j RETURN',
      '-A OUTPUT -d 10.0.0.0/8 -j RETURN',
      '-A OUTPUT -p tcp -m tcp --sport 15000:15100 -j RETURN',
      '-A OUTPUT -p tcp -m tcp --dport 15008 -j RETURN',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ]);
    expect(tracePacket(ruleset, out({ source: ip('127.0.0.6') })).decidedBy).toEqual(at(ruleset, 'OUTPUT', 1));
    expect(tracePacket(ruleset, out({ destination: ip('10.1.2.3') })).decidedBy).toEqual(at(ruleset, 'OUTPUT', 2));
    expect(tracePacket(ruleset, out({ sourcePort: 15000 })).decidedBy).toEqual(at(ruleset, 'OUTPUT', 3));
    expect(tracePacket(ruleset, out({ destinationPort: 15008 })).decidedBy).toEqual(at(ruleset, 'OUTPUT', 4));
    expect(tracePacket(ruleset, out()).decidedBy).toEqual(at(ruleset, 'OUTPUT', 5));
  });

  it('an interface whose name ends in + is matched as the kernel matches it', () => {
    const ruleset = natWith(['-A OUTPUT -o eth+ -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001']);
    expect(tracePacket(ruleset, out({ outInterface: 'eth+' })).outcome).toEqual({ kind: 'accept' });
    expect(tracePacket(ruleset, out({ outInterface: 'et+' })).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('the uid and gid of the packet, not any other', () => {
    const ruleset = natWith([
      '-A OUTPUT -m owner --uid-owner 1337 -j RETURN',
      '-A OUTPUT -m owner --gid-owner 1337 -j RETURN',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ]);
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
    expect(tracePacket(ruleset, out({ uid: 1337 })).decidedBy).toEqual(at(ruleset, 'OUTPUT', 1));
    expect(tracePacket(ruleset, out({ gid: 1337 })).decidedBy).toEqual(at(ruleset, 'OUTPUT', 2));
    expect(tracePacket(ruleset, out({ uid: 0, gid: 0 })).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('no uid or gid stands for any, and the first piece answers', () => {
    const ruleset = natWith([
      '-A OUTPUT -m owner --uid-owner 1337 -j RETURN',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ]);
    expect(tracePacket(ruleset, out({ uid: undefined, gid: undefined })).decidedBy).toEqual(at(ruleset, 'OUTPUT', 1));
    const gids = natWith([
      '-A OUTPUT -m owner --gid-owner 1337 -j RETURN',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ]);
    expect(tracePacket(gids, out({ uid: undefined, gid: undefined })).decidedBy).toEqual(at(gids, 'OUTPUT', 1));
  });

  it('the protocol and the conntrack state (new unless given)', () => {
    const ruleset = natWith([
      '-A OUTPUT -m conntrack --ctstate ESTABLISHED -j RETURN',
      '-A OUTPUT -p udp -j REDIRECT --to-ports 15053',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ]);
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
    expect(tracePacket(ruleset, out({ protocol: 'udp' })).outcome).toEqual({ kind: 'redirect', port: 15053 });
    expect(tracePacket(ruleset, out({ ctState: 'established' })).outcome).toEqual({ kind: 'accept' });
    expect(tracePacket(ruleset, out({ ctState: 'new' })).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('a packet with no conntrack state given is NEW', () => {
    const ruleset = natWith(['-A OUTPUT -p tcp -m conntrack --ctstate NEW -j REDIRECT --to-ports 15001']);
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
    expect(tracePacket(ruleset, out({ ctState: 'established' })).outcome).toEqual({ kind: 'accept' });
  });

  it('a family with no tables: accepted, no path, decided by nothing', () => {
    const ruleset = natWith(['-A OUTPUT -p tcp -j REDIRECT --to-ports 15001']);
    expect(tracePacket(ruleset, out({ family: 'ipv6', source: ip('fd00::2'), destination: ip('fd00::10') }))).toEqual({
      outcome: { kind: 'accept' },
      path: [],
      decidedBy: undefined,
    });
  });
});

describe('tracePacket: unmodelled matches', () => {
  it('an unmodelled match both ways of which end alike does not matter', () => {
    const ruleset = natWith([
      '-A OUTPUT -m addrtype --dst-type LOCAL -j REDIRECT --to-ports 15001',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ]);
    const result = tracePacket(ruleset, out());
    expect(result.outcome).toEqual({ kind: 'redirect', port: 15001 });
    expect(result.decidedBy).toEqual(at(ruleset, 'OUTPUT', 1));
  });

  it('two outcomes that differ only in the port make the match decide: unknown, naming it', () => {
    const ruleset = natWith([
      '-A OUTPUT -m addrtype --dst-type LOCAL -j REDIRECT --to-ports 15002',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ]);
    const rule = at(ruleset, 'OUTPUT', 1);
    const result = tracePacket(ruleset, out());
    expect(result.outcome).toEqual({
      kind: 'unknown',
      why: 'cannot evaluate a match of -A OUTPUT -m addrtype --dst-type LOCAL -j REDIRECT --to-ports 15002',
      rule,
    });
    expect(result.decidedBy).toEqual(rule);
    expect(result.path[0]).toEqual({
      at: rule,
      effect: 'assumed',
      note: 'assumed matching: -m addrtype --dst-type LOCAL',
    });
  });

  it('all pieces unknown the same way: the unmodelled match is still named', () => {
    const ruleset = natWith(
      ['-A OUTPUT -m addrtype --dst-type LOCAL -j NOOP', '-A OUTPUT -j LOOP', '-A LOOP -j LOOP'],
      ['LOOP', 'NOOP'],
    );
    const rule = at(ruleset, 'OUTPUT', 1);
    expect(tracePacket(ruleset, out())).toMatchObject({
      outcome: {
        kind: 'unknown',
        why: 'cannot evaluate a match of -A OUTPUT -m addrtype --dst-type LOCAL -j NOOP',
        rule,
      },
      decidedBy: rule,
    });
  });

  it('a piece that is unknown without any assumption answers for itself', () => {
    // uid 1337 reaches the loop whatever addrtype says; the other uids depend on addrtype.
    const ruleset = natWith(
      [
        '-A OUTPUT -m owner ! --uid-owner 1337 -g MESH',
        '-A OUTPUT -j LOOP',
        '-A MESH -m addrtype --dst-type LOCAL -j RETURN',
        '-A MESH -p tcp -j REDIRECT --to-ports 15001',
        '-A LOOP -j LOOP',
      ],
      ['LOOP', 'MESH'],
    );
    const loop = at(ruleset, 'OUTPUT', 2);
    expect(tracePacket(ruleset, out({ uid: undefined }))).toEqual({
      outcome: {
        kind: 'unknown',
        why: 'jump to chain LOOP enters a loop (LOOP -> LOOP); the kernel refuses such a table',
        rule: loop,
      },
      path: [],
      decidedBy: loop,
    });
  });
});
