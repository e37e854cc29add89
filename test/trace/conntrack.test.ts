import { describe, expect, it } from 'vitest';
import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import type { Ruleset } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { conntrackStage, connectionUse, runsAt } from '../../src/trace/conntrack.js';
import { hookedChains } from '../../src/trace/hooked-chains.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import type { Packet } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';

/**
 * Conntrack and the NAT core in the hook order, as test/kernel/semantics.root.test.ts shows the kernel
 * does it: raw chains see no conntrack entry (state INVALID, no connection mark), a NOTRACK there
 * keeps the packet out of the NAT core, nat chains run at the NAT core's priority.
 */
const ip = (text: string): IpAddress => parseIp(text) as IpAddress;

function iptables(...blocks: string[]): Ruleset {
  const parsed = parseIptablesSave(`${blocks.join('\n')}\n`, { backend: 'iptables-nft', family: 'ipv4', source: 't' });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { tables: parsed.tables };
}

const NAT = [
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  '-A PREROUTING -p tcp -j REDIRECT --to-ports 15006',
  '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
  'COMMIT',
].join('\n');
const raw = (...rules: string[]): string =>
  ['*raw', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...rules, 'COMMIT'].join('\n');
const mangle = (...rules: string[]): string =>
  ['*mangle', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...rules, 'COMMIT'].join('\n');

interface ChainSpec {
  readonly name: string;
  readonly hook: 'output' | 'prerouting';
  readonly prio: number;
  readonly type: 'nat' | 'filter' | 'route';
  readonly expr: readonly unknown[][];
}

function nft(...chains: ChainSpec[]): Ruleset {
  const items: unknown[] = [{ table: { family: 'ip', name: 't' } }];
  for (const { name, hook, prio, type, expr } of chains) {
    items.push({ chain: { family: 'ip', table: 't', name, hook, prio, type, policy: 'accept' } });
    for (const e of expr) items.push({ rule: { family: 'ip', table: 't', chain: name, expr: e } });
  }
  const parsed = parseNftJson(JSON.stringify({ nftables: items }), 't');
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { tables: parsed.tables };
}

const REDIRECT_OUT = [{ redirect: { port: 15001 } }];
const MARK_1 = { match: { op: '==', left: { meta: { key: 'mark' } }, right: 1 } };
const SET_MARK_1 = { mangle: { key: { meta: { key: 'mark' } }, value: 1 } };

const out = (over: Partial<Packet> = {}): Packet => ({
  family: 'ipv4',
  hook: 'output',
  protocol: 'tcp',
  source: ip('10.0.0.2'),
  destination: ip('10.96.0.10'),
  sourcePort: 40000,
  destinationPort: 80,
  uid: 1000,
  gid: 1000,
  outInterface: 'eth0',
  ...over,
});
const inbound: Packet = {
  family: 'ipv4',
  hook: 'prerouting',
  protocol: 'tcp',
  source: ip('10.0.0.9'),
  destination: ip('10.0.0.2'),
  sourcePort: 40000,
  destinationPort: 8080,
  inInterface: 'eth0',
};

describe('the stages of a hook', () => {
  it('a chain runs before conntrack below -200, at it at -200, after it above', () => {
    expect(conntrackStage(-201)).toBe('before');
    expect(conntrackStage(-200)).toBe('at');
    expect(conntrackStage(-199)).toBe('after');
  });

  it('nat chains run at the NAT core (-100), others at their priority', () => {
    expect(runsAt('nat', -160)).toBe(-100);
    expect(runsAt('nat', 50)).toBe(-100);
    expect(runsAt('route', -150)).toBe(-150);
    expect(runsAt('filter', 50)).toBe(50);
  });

  it('nat chains are ordered inside the NAT core by their own priority; a chain at -100 beside them ties', () => {
    const ruleset = nft(
      { name: 'late', hook: 'output', prio: 50, type: 'nat', expr: [] },
      { name: 'early', hook: 'output', prio: -160, type: 'nat', expr: [] },
      { name: 'mangle', hook: 'output', prio: -150, type: 'route', expr: [] },
      { name: 'tie', hook: 'output', prio: -100, type: 'filter', expr: [] },
      { name: 'filter', hook: 'output', prio: 0, type: 'filter', expr: [] },
    );
    const hooked = hookedChains(ruleset, { family: 'ipv4', hook: 'output', atoms: buildInterfaceAtoms([]) });
    expect(hooked.map((h) => h.chain.name)).toEqual(['mangle', 'early', 'tie', 'late', 'filter']);
    expect(hooked.map((h) => h.tiesNatCore)).toEqual([false, false, true, false, false]);
    const alone = nft({ name: 'tie', hook: 'output', prio: -100, type: 'filter', expr: [] });
    expect(
      hookedChains(alone, { family: 'ipv4', hook: 'output', atoms: buildInterfaceAtoms([]) })[0]?.tiesNatCore,
    ).toBe(false);
  });

  it('saves, restores and NOTRACK among other statements count as uses', () => {
    const [, table] = iptables(
      raw(),
      mangle('-A OUTPUT -j CONNMARK --save-mark', '-A OUTPUT -j CONNMARK --restore-mark', '-A OUTPUT -j ACCEPT'),
    ).tables;
    expect([...(table?.chains.get('OUTPUT')?.rules ?? [])].map(connectionUse)).toEqual([
      { mark: true, state: false },
      { mark: true, state: false },
      { mark: false, state: false },
    ]);
    const logged = nft({
      name: 'c',
      hook: 'output',
      prio: -300,
      type: 'filter',
      expr: [[{ log: null }, { notrack: null }]],
    });
    const [rule] = logged.tables[0]?.chains.get('c')?.rules ?? [];
    expect(rule && connectionUse(rule)).toEqual({ mark: false, state: true });
    const saved = nft({
      name: 'm',
      hook: 'output',
      prio: -150,
      type: 'route',
      expr: [[SET_MARK_1, { mangle: { key: { ct: { key: 'mark' } }, value: { meta: { key: 'mark' } } } }]],
    });
    const [save] = saved.tables[0]?.chains.get('m')?.rules ?? [];
    expect(save?.actions.map((action) => action.kind)).toEqual(['set-mark', 'save-mark']);
    expect(save && connectionUse(save)).toEqual({ mark: true, state: false });
  });

  it('what of the connection a rule uses', () => {
    const [table] = iptables(
      raw(
        '-A OUTPUT -m connmark --mark 0x1 -j ACCEPT',
        '-A OUTPUT -m conntrack --ctstate NEW -j ACCEPT',
        '-A OUTPUT -j CT --notrack',
        '-A OUTPUT -m mark --mark 0x1 -j ACCEPT',
      ),
      mangle('-A OUTPUT -j CONNMARK --save-mark', '-A OUTPUT -j CONNMARK --restore-mark'),
    ).tables;
    const rules = [...(table?.chains.get('OUTPUT')?.rules ?? [])];
    expect(rules.map(connectionUse)).toEqual([
      { mark: true, state: false },
      { mark: false, state: true },
      { mark: false, state: true },
      { mark: false, state: false },
    ]);
  });
});

describe('NOTRACK keeps a packet out of the NAT core', () => {
  it('raw OUTPUT -j CT --notrack: not redirected, decided by the NOTRACK rule', () => {
    const result = tracePacket(iptables(raw('-A OUTPUT -d 10.96.0.0/12 -j CT --notrack'), NAT), out());
    expect(result.outcome).toEqual({ kind: 'accept' });
    expect(result.decidedBy?.text).toBe('-A OUTPUT -d 10.96.0.0/12 -j CT --notrack');
    expect(
      tracePacket(iptables(raw('-A OUTPUT -d 10.96.0.0/12 -j CT --notrack'), NAT), out({ destination: ip('10.1.0.1') }))
        .outcome,
    ).toEqual({
      kind: 'redirect',
      port: 15001,
    });
  });

  it('raw PREROUTING -j NOTRACK: inbound not redirected', () => {
    expect(tracePacket(iptables(raw('-A PREROUTING -p tcp -j NOTRACK'), NAT), inbound).outcome).toEqual({
      kind: 'accept',
    });
  });

  it('a NOTRACK after conntrack (nft at mangle priority) changes nothing; a second NOTRACK neither', () => {
    const late = nft(
      { name: 'm', hook: 'output', prio: -150, type: 'filter', expr: [[{ notrack: null }]] },
      { name: 'n', hook: 'output', prio: -100, type: 'nat', expr: [REDIRECT_OUT] },
    );
    expect(tracePacket(late, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
    const twice = iptables(raw('-A OUTPUT -j CT --notrack', '-A OUTPUT -j NOTRACK'), NAT);
    const result = tracePacket(twice, out());
    expect(result.outcome).toEqual({ kind: 'accept' });
    expect(result.decidedBy?.text).toBe('-A OUTPUT -j CT --notrack');
    expect(result.path.map((step) => [step.effect, step.note])).toContainEqual([
      'matched',
      'NOTRACK after conntrack: no effect',
    ]);
    expect(result.path.map((step) => [step.effect, step.note])).toContainEqual([
      'matched',
      'NOTRACK: the connection is untracked, so no NAT applies to it',
    ]);
  });

  it('a rule at -200 that does not use the connection is decided', () => {
    const ruleset = nft(
      { name: 'c', hook: 'output', prio: -200, type: 'filter', expr: [[SET_MARK_1]] },
      { name: 'n', hook: 'output', prio: -100, type: 'nat', expr: [[MARK_1, { return: null }], REDIRECT_OUT] },
    );
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'accept' });
  });

  it('a save or restore of the mark on an untracked packet is unknown', () => {
    for (const action of ['--save-mark', '--restore-mark']) {
      const ruleset = iptables(raw('-A OUTPUT -j CT --notrack'), mangle(`-A OUTPUT -j CONNMARK ${action}`), NAT);
      expect(tracePacket(ruleset, out()).outcome.kind, action).toBe('unknown');
    }
  });

  it('a NOTRACK at conntrack priority (-200) is unknown: registration order decides', () => {
    const tie = nft(
      { name: 'c', hook: 'output', prio: -200, type: 'filter', expr: [[{ notrack: null }]] },
      { name: 'n', hook: 'output', prio: -100, type: 'nat', expr: [REDIRECT_OUT] },
    );
    const result = tracePacket(tie, out());
    expect(result.outcome.kind).toBe('unknown');
    expect(JSON.stringify(result.outcome)).toMatch(/conntrack's priority \(-200\)/);
  });

  it('after NOTRACK the state reads UNTRACKED, and later chains see it', () => {
    const ruleset = iptables(
      raw('-A OUTPUT -j CT --notrack', '-A OUTPUT -m conntrack --ctstate UNTRACKED -j DROP'),
      NAT,
    );
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'drop' });
    const mangled = iptables(
      raw('-A OUTPUT -j CT --notrack'),
      mangle('-A OUTPUT -m state --state UNTRACKED -j DROP'),
      NAT,
    );
    expect(tracePacket(mangled, out()).outcome).toEqual({ kind: 'drop' });
  });

  it('TPROXY of an untracked packet is unknown', () => {
    const ruleset = iptables(
      raw('-A PREROUTING -j NOTRACK'),
      mangle('-A PREROUTING -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1'),
    );
    const result = tracePacket(ruleset, inbound);
    expect(result.outcome.kind).toBe('unknown');
    expect(JSON.stringify(result.outcome)).toMatch(/TPROXY of a packet untracked by iptables-nft raw PREROUTING #1/);
  });

  it('a connection mark of an untracked packet is unknown', () => {
    const ruleset = iptables(raw('-A OUTPUT -j CT --notrack'), mangle('-A OUTPUT -m connmark --mark 0x0 -j DROP'), NAT);
    const result = tracePacket(ruleset, out());
    expect(result.outcome.kind).toBe('unknown');
    expect(JSON.stringify(result.outcome)).toMatch(/untracked by iptables-nft raw OUTPUT #1/);
  });
});

describe('before conntrack a packet has no entry', () => {
  it('its state reads INVALID: raw --ctstate INVALID matches every packet, NEW none', () => {
    const invalid = iptables(raw('-A OUTPUT -m conntrack --ctstate INVALID -j CT --notrack'), NAT);
    expect(tracePacket(invalid, out()).outcome).toEqual({ kind: 'accept' });
    const fresh = iptables(raw('-A OUTPUT -m conntrack --ctstate NEW -j CT --notrack'), NAT);
    expect(tracePacket(fresh, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('after conntrack the state is the packet own again (NEW)', () => {
    const ruleset = iptables(
      raw('-A OUTPUT -m conntrack --ctstate NEW -j DROP'),
      mangle('-A OUTPUT -m conntrack --ctstate NEW -j MARK --set-xmark 0x1/0xffffffff'),
      [
        '*nat',
        ':PREROUTING ACCEPT [0:0]',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT -m mark --mark 0x1 -j REDIRECT --to-ports 15001',
        'COMMIT',
      ].join('\n'),
    );
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('a connection mark test there is unknown', () => {
    const ruleset = iptables(raw('-A OUTPUT -m connmark --mark 0x0 -j CT --notrack'), NAT);
    const result = tracePacket(ruleset, out());
    expect(result.outcome.kind).toBe('unknown');
    expect(JSON.stringify(result.outcome)).toMatch(/has no conntrack entry yet \(before conntrack\)/);
  });
});

describe('nat chains run inside the NAT core', () => {
  it('a mark set at -150 is seen by a nat chain registered at -160', () => {
    const ruleset = nft(
      { name: 'n', hook: 'output', prio: -160, type: 'nat', expr: [[MARK_1, { return: null }], REDIRECT_OUT] },
      { name: 'm', hook: 'output', prio: -150, type: 'route', expr: [[SET_MARK_1]] },
    );
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'accept' });
  });

  it('a mark set at 0 comes after a nat chain registered at 50', () => {
    const ruleset = nft(
      { name: 'n', hook: 'output', prio: 50, type: 'nat', expr: [[MARK_1, { return: null }], REDIRECT_OUT] },
      { name: 'm', hook: 'output', prio: 0, type: 'route', expr: [[SET_MARK_1]] },
    );
    expect(tracePacket(ruleset, out()).outcome).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('a mark set by a chain at the NAT core priority beside nat chains is unknown', () => {
    const ruleset = nft(
      { name: 'n', hook: 'output', prio: -100, type: 'nat', expr: [[MARK_1, { return: null }], REDIRECT_OUT] },
      { name: 'm', hook: 'output', prio: -100, type: 'filter', expr: [[SET_MARK_1]] },
    );
    const result = tracePacket(ruleset, out());
    expect(result.outcome.kind).toBe('unknown');
    expect(JSON.stringify(result.outcome)).toMatch(/t m runs at the NAT core's priority \(-100\).*it changes the mark/);
  });
});

describe('pieces are reported with the states the trace began with', () => {
  it('an INVALID packet untracked in raw is reported INVALID, not UNTRACKED', async () => {
    const { traceRegion, budgetOf } = await import('../../src/trace/trace-region.js');
    const { ZERO_MARK } = await import('../../src/trace/mark-set.js');
    const { INVALID_STATE } = await import('../../src/trace/conntrack.js');
    const ruleset = iptables(raw('-A OUTPUT -j CT --notrack'), NAT);
    const atoms = buildInterfaceAtoms([]);
    const { connectionSpace } = await import('../../src/trace/connection-space.js');
    const region = { ...connectionSpace('ipv4', atoms.all), mark: ZERO_MARK, ctstates: INVALID_STATE };
    const pieces = traceRegion(ruleset, { family: 'ipv4', hook: 'output', atoms }, region, budgetOf(1000));
    expect(pieces.map((piece) => [piece.outcome.kind, piece.region.ctstates])).toEqual([['accept', INVALID_STATE]]);
  });

  it('with --drop-invalid (NEW and INVALID asked about), a raw NOTRACK before the INVALID drop is a finding on INVALID packets', async () => {
    const { readFileSync } = await import('node:fs');
    const { analyzeDumps } = await import('../../src/rules-check/analyze.js');
    const { corpusFile } = await import('../harness/pod-namespace.js');
    const { specFromFlags } = await import('../harness/spec.js');
    const { flagsFor, loadManifest } = await import('../explain/corpus.js');
    const testCase = loadManifest().find((c) => c.dir === 'istio/drop-invalid');
    if (!testCase) throw new Error('istio/drop-invalid is not in the manifest');
    const spec = specFromFlags(flagsFor(testCase).argv);
    const text = readFileSync(corpusFile('istio/drop-invalid', 'iptables-nft-save.v4.txt'), 'utf8');
    const dump = (extra: string) => [
      { backend: 'iptables-nft' as const, family: 'ipv4' as const, source: 't', text: `${text}\n${extra}\n` },
    ];
    expect(analyzeDumps(spec, dump(''), { families: ['ipv4'] })).toMatchObject({ check: { status: 'passed' } });
    const attacked = analyzeDumps(spec, dump(raw('-A PREROUTING -p tcp -j NOTRACK')), { families: ['ipv4'] });
    if (attacked.kind !== 'checked') throw new Error('does not parse');
    expect(attacked.check.status).toBe('failed');
    const inbound = attacked.check.findings.filter((f) => f.expectation.hook === 'prerouting');
    expect(inbound.map((f) => f.expectation.id)).toEqual(['ipv4/inbound/invalid-dropped']);
    expect(inbound.every((f) => f.decidedBy?.text === '-A PREROUTING -p tcp -j NOTRACK')).toBe(true);
  });
});
