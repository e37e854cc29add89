import { describe, expect, it } from 'vitest';
import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import { mergeRuleSources } from '../../src/rules/merge.js';
import type { Provenance, Ruleset } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { extended, pathOf, withStep, type Flow, type Steps } from '../../src/trace/flow.js';
import { hookedChains, policyProvenance, where } from '../../src/trace/hooked-chains.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import { describeOutcome, sameOutcome, type Outcome, type TraceStep } from '../../src/trace/outcome.js';

const ip = (text: string): IpAddress => parseIp(text) as IpAddress;

describe('describeOutcome', () => {
  it('REDIRECT with and without a port', () => {
    expect(describeOutcome({ kind: 'redirect', port: 15001 })).toBe('redirected to local port 15001');
    expect(describeOutcome({ kind: 'redirect', port: undefined })).toBe('redirected to its own port on this host');
  });

  it('DNAT names the address it rewrites to, with the port when there is one', () => {
    expect(describeOutcome({ kind: 'dnat', address: ip('127.0.0.1'), port: 15001 })).toBe('DNAT to 127.0.0.1:15001');
    expect(describeOutcome({ kind: 'dnat', address: ip('10.0.0.9'), port: undefined })).toBe('DNAT to 10.0.0.9');
    expect(describeOutcome({ kind: 'dnat', address: ip('fd00::1'), port: 15001 })).toBe('DNAT to [fd00::1]:15001');
    expect(describeOutcome({ kind: 'dnat', address: ip('fd00::1'), port: undefined })).toBe('DNAT to fd00::1');
    expect(describeOutcome({ kind: 'dnat', address: undefined, port: 15001 })).toBe('DNAT to the same address:15001');
    expect(describeOutcome({ kind: 'dnat', address: undefined, port: undefined })).toBe('DNAT to the same address');
  });

  it('TPROXY, accept, drop and unknown', () => {
    expect(describeOutcome({ kind: 'tproxy', port: 15006 })).toBe('diverted by TPROXY to port 15006');
    expect(describeOutcome({ kind: 'accept' })).toBe('not redirected (original destination)');
    expect(describeOutcome({ kind: 'drop' })).toBe('dropped');
    expect(describeOutcome({ kind: 'unknown', why: 'the chain MESH enters a loop (MESH -> MESH)' })).toBe(
      'unknown (the chain MESH enters a loop (MESH -> MESH))',
    );
  });

  it('two DNATs to different addresses on one port read differently', () => {
    const a = describeOutcome({ kind: 'dnat', address: ip('10.0.0.1'), port: 8080 });
    const b = describeOutcome({ kind: 'dnat', address: ip('10.0.0.2'), port: 8080 });
    expect(a).not.toBe(b);
  });
});

describe('sameOutcome', () => {
  it('different kinds never agree', () => {
    expect(sameOutcome({ kind: 'redirect', port: 15001 }, { kind: 'tproxy', port: 15001 })).toBe(false);
    expect(sameOutcome({ kind: 'accept' }, { kind: 'drop' })).toBe(false);
    expect(sameOutcome({ kind: 'drop' }, { kind: 'accept' })).toBe(false);
  });

  it('REDIRECT and TPROXY agree on the same port only', () => {
    expect(sameOutcome({ kind: 'redirect', port: 15001 }, { kind: 'redirect', port: 15001 })).toBe(true);
    expect(sameOutcome({ kind: 'redirect', port: 15001 }, { kind: 'redirect', port: 4140 })).toBe(false);
    expect(sameOutcome({ kind: 'redirect', port: undefined }, { kind: 'redirect', port: undefined })).toBe(true);
    expect(sameOutcome({ kind: 'redirect', port: undefined }, { kind: 'redirect', port: 15001 })).toBe(false);
    expect(sameOutcome({ kind: 'tproxy', port: 15006 }, { kind: 'tproxy', port: 15006 })).toBe(true);
    expect(sameOutcome({ kind: 'tproxy', port: 15006 }, { kind: 'tproxy', port: 15008 })).toBe(false);
  });

  it('DNAT agrees on the same port, address and family', () => {
    const dnat = (address: IpAddress | undefined, port: number | undefined): Outcome => ({
      kind: 'dnat',
      address,
      port,
    });
    expect(sameOutcome(dnat(ip('127.0.0.1'), 15001), dnat(ip('127.0.0.1'), 15001))).toBe(true);
    expect(sameOutcome(dnat(undefined, 15001), dnat(undefined, 15001))).toBe(true);
    expect(sameOutcome(dnat(ip('127.0.0.1'), undefined), dnat(ip('127.0.0.1'), undefined))).toBe(true);
    expect(sameOutcome(dnat(ip('127.0.0.1'), 15001), dnat(ip('127.0.0.1'), 15002))).toBe(false);
    expect(sameOutcome(dnat(ip('127.0.0.1'), 15001), dnat(ip('127.0.0.2'), 15001))).toBe(false);
    expect(sameOutcome(dnat(ip('127.0.0.1'), 15001), dnat(undefined, 15001))).toBe(false);
    expect(sameOutcome(dnat(undefined, 15001), dnat(ip('127.0.0.1'), 15001))).toBe(false);
    // ::7f00:1 has the value of 127.0.0.1 but is another address.
    expect(sameOutcome(dnat(ip('127.0.0.1'), 15001), dnat(ip('::7f00:1'), 15001))).toBe(false);
  });

  it('accept and drop agree with themselves; unknown never agrees, not even with itself', () => {
    expect(sameOutcome({ kind: 'accept' }, { kind: 'accept' })).toBe(true);
    expect(sameOutcome({ kind: 'drop' }, { kind: 'drop' })).toBe(true);
    expect(sameOutcome({ kind: 'unknown', why: 'x' }, { kind: 'unknown', why: 'x' })).toBe(false);
  });
});

describe('hookedChains, policyProvenance, where', () => {
  // Istio's nftables mode (inet and ip tables), a second ip table at a lower priority, an ip6 table,
  // a user chain and a prerouting chain: only the base chains of this family on this hook count.
  const json = JSON.stringify({
    nftables: [
      { metainfo: { version: '1.0.9', release_name: 'Old Doc Yak #3', json_schema_version: 1 } },
      { table: { family: 'inet', name: 'istio-proxy-nat', handle: 1 } },
      {
        chain: {
          family: 'inet',
          table: 'istio-proxy-nat',
          name: 'output',
          handle: 1,
          type: 'nat',
          hook: 'output',
          prio: -100,
          policy: 'accept',
        },
      },
      {
        chain: {
          family: 'inet',
          table: 'istio-proxy-nat',
          name: 'prerouting',
          handle: 2,
          type: 'nat',
          hook: 'prerouting',
          prio: -100,
          policy: 'accept',
        },
      },
      { chain: { family: 'inet', table: 'istio-proxy-nat', name: 'istio-output', handle: 3 } },
      { table: { family: 'ip', name: 'late', handle: 2 } },
      {
        chain: {
          family: 'ip',
          table: 'late',
          name: 'out',
          handle: 1,
          type: 'nat',
          hook: 'output',
          prio: 100,
          policy: 'accept',
        },
      },
      {
        chain: {
          family: 'ip',
          table: 'late',
          name: 'same',
          handle: 2,
          type: 'nat',
          hook: 'output',
          prio: -100,
          policy: 'accept',
        },
      },
      { table: { family: 'ip', name: 'early', handle: 3 } },
      {
        chain: {
          family: 'ip',
          table: 'early',
          name: 'guard',
          handle: 1,
          type: 'filter',
          hook: 'output',
          prio: -150,
          policy: 'drop',
        },
      },
      { table: { family: 'ip6', name: 'six', handle: 4 } },
      {
        chain: {
          family: 'ip6',
          table: 'six',
          name: 'out',
          handle: 1,
          type: 'nat',
          hook: 'output',
          prio: -200,
          policy: 'accept',
        },
      },
    ],
  });
  const parsed = parseNftJson(json, 'nft.json');
  if (!parsed.ok) throw new Error(parsed.error.message);
  const ruleset: Ruleset = mergeRuleSources([{ backend: 'nftables', tables: parsed.tables }]).ruleset;
  const atoms = buildInterfaceAtoms([]);
  const summary = (family: 'ipv4' | 'ipv6', hook: 'output' | 'prerouting') =>
    hookedChains(ruleset, { family, hook, atoms }).map(
      (h) => `${h.table.family} ${h.table.name} ${h.chain.name} ${h.priority} ${h.type} ${h.policy}`,
    );

  it('in priority order, equal priorities in table order', () => {
    expect(summary('ipv4', 'output')).toEqual([
      'ipv4 early guard -150 filter drop',
      'inet istio-proxy-nat output -100 nat accept',
      'ipv4 late same -100 nat accept',
      'ipv4 late out 100 nat accept',
    ]);
    expect(summary('ipv6', 'output')).toEqual([
      'ipv6 six out -200 nat accept',
      'inet istio-proxy-nat output -100 nat accept',
    ]);
    expect(summary('ipv4', 'prerouting')).toEqual(['inet istio-proxy-nat prerouting -100 nat accept']);
  });

  it("a policy is named as its chain's rule number 0", () => {
    const guard = hookedChains(ruleset, { family: 'ipv4', hook: 'output', atoms })[0];
    if (!guard) throw new Error('no chain');
    expect(policyProvenance(guard)).toEqual({
      backend: 'nftables',
      family: 'ipv4',
      table: 'early',
      chain: 'guard',
      position: 0,
      text: 'policy DROP of guard',
    });
    expect(where(policyProvenance(guard))).toBe('nftables early guard');
  });

  it('a rule is named with its position', () => {
    const at: Provenance = {
      backend: 'iptables-legacy',
      family: 'ipv4',
      table: 'nat',
      chain: 'ISTIO_OUTPUT',
      position: 1,
      text: '-A ISTIO_OUTPUT -j RETURN',
    };
    expect(where(at)).toBe('iptables-legacy nat ISTIO_OUTPUT #1');
    expect(where({ ...at, position: 12 })).toBe('iptables-legacy nat ISTIO_OUTPUT #12');
  });
});

describe('flow paths', () => {
  const step = (position: number): TraceStep => ({
    at: {
      backend: 'iptables-nft',
      family: 'ipv4',
      table: 'nat',
      chain: 'OUTPUT',
      position,
      text: `-A OUTPUT #${position}`,
    },
    effect: 'matched',
  });

  it('no steps, one step, steps in the order they were taken', () => {
    expect(pathOf(undefined)).toEqual([]);
    expect(pathOf(extended(undefined, step(1)))).toEqual([step(1)]);
    expect(extended(undefined, step(1))).toEqual({ step: step(1), previous: undefined, length: 1 });
    expect(pathOf(extended(extended(undefined, step(1)), step(2)))).toEqual([step(1), step(2)]);
  });

  it('keeps the first 256 steps of a longer path', () => {
    let path: Steps | undefined;
    for (let position = 1; position <= 300; position++) path = extended(path, step(position));
    expect(path?.length).toBe(256);
    const steps = pathOf(path);
    expect(steps).toHaveLength(256);
    expect(steps[0]).toEqual(step(1));
    expect(steps[255]).toEqual(step(256));
  });

  it('withStep adds the step and keeps the rest of the flow', () => {
    const flow = { hooked: 2, path: extended(undefined, step(1)), assumed: [], frame: undefined } as unknown as Flow;
    const next = withStep(flow, step(2));
    expect(next.hooked).toBe(2);
    expect(pathOf(next.path)).toEqual([step(1), step(2)]);
    expect(pathOf(flow.path)).toEqual([step(1)]);
  });
});
