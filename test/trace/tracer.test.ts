import { describe, expect, it } from 'vitest';
import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { mergeRuleSources } from '../../src/rules/merge.js';
import type { Ruleset } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import type { Packet } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';

const ip = (text: string): IpAddress => parseIp(text) as IpAddress;

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

const out = (over: Partial<Packet> = {}): Packet => ({
  family: 'ipv4',
  hook: 'output',
  protocol: 'tcp',
  source: ip('10.0.0.2'),
  destination: ip('192.0.2.10'),
  sourcePort: 40000,
  destinationPort: 80,
  uid: 1000,
  gid: 1000,
  outInterface: 'eth0',
  ...over,
});

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
