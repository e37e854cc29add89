import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { mergeRuleSources } from '../../src/rules/merge.js';
import type { Ruleset } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import { interfacePatterns } from '../../src/trace/interface-patterns.js';
import { ANY_MARK, intersectMarks, markCube, ZERO_MARK } from '../../src/trace/mark-set.js';
import type { Region } from '../../src/trace/region.js';
import { tracePacket } from '../../src/trace/trace.js';
import { inboundPacket as inbound, ip, outboundPacket as out } from './sample-packets.js';
import { connectionSpace } from '../../src/trace/connection-space.js';
import { budgetOf, traceRegion } from '../../src/trace/trace-region.js';

function tables(text: string): Ruleset {
  const parsed = parseIptablesSave(text, { backend: 'iptables-nft', family: 'ipv4', source: 't' });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { tables: parsed.tables };
}

function nat(rules: string[]): Ruleset {
  return tables(
    ['*nat', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':MESH - [0:0]', ...rules, 'COMMIT', ''].join('\n'),
  );
}

function outputSpace(ruleset: Ruleset, mark = ANY_MARK) {
  const atoms = buildInterfaceAtoms(interfacePatterns(ruleset));
  const region: Region = { ...connectionSpace('ipv4', atoms.all), mark };
  return traceRegion(ruleset, { family: 'ipv4', hook: 'output', atoms }, region, budgetOf(100_000));
}

describe('region tracer: TPROXY', () => {
  const mangle = (rest: string[]) =>
    tables(
      [
        '*mangle',
        ':PREROUTING ACCEPT [0:0]',
        ':DIVERT - [0:0]',
        '-A PREROUTING -p tcp -j DIVERT',
        ...rest,
        'COMMIT',
        '',
      ].join('\n'),
    );

  it('iptables TPROXY ends the table: a DROP after it is never reached', () => {
    const ruleset = mangle([
      '-A DIVERT -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff',
      '-A DIVERT -j DROP',
    ]);
    expect(tracePacket(ruleset, inbound()).outcome).toEqual({ kind: 'tproxy', port: 15006 });
  });

  it('over the whole inbound space, every TCP packet is diverted and nothing reaches the DROP', () => {
    const ruleset = mangle([
      '-A DIVERT -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff',
      '-A DIVERT -j DROP',
    ]);
    const atoms = buildInterfaceAtoms(interfacePatterns(ruleset));
    const region: Region = { ...connectionSpace('ipv4', atoms.all), mark: ZERO_MARK };
    const pieces = traceRegion(ruleset, { family: 'ipv4', hook: 'prerouting', atoms }, region, budgetOf(1000));
    expect(pieces.map((piece) => piece.outcome)).toEqual([{ kind: 'tproxy', port: 15006 }]);
  });

  it('TPROXY wins over a later nat REDIRECT for the same packet', () => {
    const text = [
      '*mangle',
      ':PREROUTING ACCEPT [0:0]',
      '-A PREROUTING -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1',
      'COMMIT',
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      '-A PREROUTING -p tcp -j REDIRECT --to-ports 9',
      'COMMIT',
      '',
    ].join('\n');
    expect(tracePacket(tables(text), inbound()).outcome).toEqual({ kind: 'tproxy', port: 15006 });
  });
});

describe('region tracer: marks with masks', () => {
  it('a masked mark match splits the mark space exactly', () => {
    const ruleset = nat([
      '-A OUTPUT -j MESH',
      '-A MESH -m mark --mark 0x10/0xf0 -j RETURN',
      '-A MESH -p tcp -j REDIRECT --to-ports 4140',
    ]);
    const pieces = outputSpace(ruleset);
    const left = pieces.filter((piece) => piece.outcome.kind === 'accept');
    expect(left).toHaveLength(1);
    const mark = left[0]?.region.mark ?? [];
    // 0x1f and 0xa19 match under the mask 0xf0; 0x20 does not.
    expect(intersectMarks(mark, markCube(0x1f, 0xffffffff))).toHaveLength(1);
    expect(intersectMarks(mark, markCube(0xa19, 0xffffffff))).toHaveLength(1);
    expect(intersectMarks(mark, markCube(0x20, 0xffffffff))).toHaveLength(0);
  });

  it('--set-xmark with a mask rewrites only the masked bits, and a later masked match sees them', () => {
    const ruleset = tables(
      [
        '*mangle',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT -j MARK --set-xmark 0x500/0xf00',
        'COMMIT',
        '*nat',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT -m mark --mark 0x500/0xf00 -j RETURN',
        '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const pieces = outputSpace(ruleset, markCube(0x7, 0xffffffff));
    expect(pieces.map((piece) => piece.outcome.kind)).toEqual(['accept']);
    expect(intersectMarks(pieces[0]?.region.mark ?? [], markCube(0x507, 0xffffffff))).toHaveLength(1);
  });

  it('--set-xmark leaves the bits outside its mask as they were (any mark stays any, outside the mask)', () => {
    const ruleset = tables(
      [
        '*mangle',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT -j MARK --set-xmark 0x500/0xf00',
        'COMMIT',
        '*nat',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT -m mark --mark 0x500/0xf00 -j RETURN',
        '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const pieces = outputSpace(ruleset);
    expect(pieces.map((piece) => piece.outcome.kind)).toEqual(['accept']);
    const mark = pieces[0]?.region.mark ?? [];
    expect(intersectMarks(mark, markCube(0xa5a7, 0xffffffff))).toHaveLength(1);
    expect(intersectMarks(mark, markCube(0xa6a7, 0xffffffff))).toHaveLength(0);
  });
});

describe('region tracer: interface wildcards', () => {
  it('iptables `eth+` matches every eth name and nothing else', () => {
    const ruleset = nat(['-A OUTPUT -o eth+ -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140']);
    expect(tracePacket(ruleset, out({ outInterface: 'eth7' })).outcome.kind).toBe('accept');
    expect(tracePacket(ruleset, out({ outInterface: 'ens3' })).outcome).toEqual({ kind: 'redirect', port: 4140 });
    const pieces = outputSpace(ruleset);
    expect(pieces.map((piece) => piece.outcome.kind).sort()).toEqual(['accept', 'redirect']);
  });

  it('nft `eth*` likewise', () => {
    const json = JSON.stringify({
      nftables: [
        { table: { family: 'ip', name: 't', handle: 1 } },
        {
          chain: {
            family: 'ip',
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
            family: 'ip',
            table: 't',
            chain: 'out',
            handle: 2,
            expr: [{ match: { op: '==', left: { meta: { key: 'oifname' } }, right: 'eth*' } }, { return: null }],
          },
        },
        { rule: { family: 'ip', table: 't', chain: 'out', handle: 3, expr: [{ redirect: { port: 4140 } }] } },
      ],
    });
    const parsed = parseNftJson(json, 'j');
    if (!parsed.ok) throw new Error(parsed.error.message);
    const ruleset = mergeRuleSources([{ backend: 'nftables', tables: parsed.tables }]).ruleset;
    expect(tracePacket(ruleset, out({ outInterface: 'eth12' })).outcome.kind).toBe('accept');
    expect(tracePacket(ruleset, out({ outInterface: 'veth0' })).outcome.kind).toBe('redirect');
  });

  it('atoms: a longer wildcard and an exact name inside a shorter one are their own atoms', () => {
    const atoms = buildInterfaceAtoms(['eth+', 'eth1', 'eth1+', 'lo']);
    expect(atoms.atoms.map((atom) => atom.label)).toEqual([
      'eth+ (other)',
      'eth1',
      'eth1+ (other)',
      'lo',
      'any other interface',
    ]);
  });
});

describe('region tracer: drop-invalid and conntrack state', () => {
  it('a DROP of state INVALID in mangle drops exactly the invalid packets', () => {
    const ruleset = tables(
      [
        '*mangle',
        ':PREROUTING ACCEPT [0:0]',
        '-A PREROUTING -m conntrack --ctstate INVALID -j DROP',
        'COMMIT',
        '',
      ].join('\n'),
    );
    expect(tracePacket(ruleset, inbound({ ctState: 'invalid' })).outcome.kind).toBe('drop');
    expect(tracePacket(ruleset, inbound()).outcome.kind).toBe('accept');
  });
});

describe('region tracer: CIDRs, cover and loops', () => {
  it('pieces cover the space exactly: a /9 RETURN leaves the other /9 of a /8 redirected', () => {
    const ruleset = nat(['-A OUTPUT -d 10.0.0.0/9 -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140']);
    const pieces = outputSpace(ruleset);
    const accepted = pieces.filter((piece) => piece.outcome.kind === 'accept').map((piece) => piece.region.daddr);
    expect(accepted).toEqual([[[0x0a000000n, 0x0a7fffffn]]]);
    expect(tracePacket(ruleset, out({ destination: ip('10.128.0.1') })).outcome.kind).toBe('redirect');
  });

  it('a goto loop is reported as a loop at once, not walked', () => {
    const ruleset = tables(
      [
        '*nat',
        ':OUTPUT ACCEPT [0:0]',
        ':A - [0:0]',
        ':B - [0:0]',
        '-A OUTPUT -j A',
        '-A A -g B',
        '-A B -g A',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const result = tracePacket(ruleset, out());
    expect(result.outcome.kind === 'unknown' && result.outcome.why).toContain('enters a loop (A -> B -> A)');
  });

  it('the work bound is global: a tiny budget ends every region as unknown, never as a pass', () => {
    const ruleset = nat([
      '-A OUTPUT -d 10.0.0.0/8 -j RETURN',
      '-A OUTPUT -p tcp -m tcp --dport 443 -j RETURN',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
    ]);
    const atoms = buildInterfaceAtoms([]);
    const region = connectionSpace('ipv4', atoms.all);
    const pieces = traceRegion(ruleset, { family: 'ipv4', hook: 'output', atoms }, region, budgetOf(2));
    expect(pieces.some((piece) => piece.outcome.kind === 'unknown' && piece.outcome.why.includes('work limit'))).toBe(
      true,
    );
  });
});

describe('region tracer: memory bound', () => {
  // Each MARK rule matches a narrower port range and goes on: the part it leaves waits on the
  // stack while the matched part walks on, so pending regions grow with the chain.
  const marks = nat(
    Array.from(
      { length: 40 },
      (_, i) => `-A OUTPUT -p tcp -m tcp --dport 1:${60000 - i} -j MARK --set-xmark 0x${(i + 1).toString(16)}/0xff`,
    ).concat('-A OUTPUT -p tcp -j REDIRECT --to-ports 4140'),
  );

  function trace(maxPending: number) {
    const atoms = buildInterfaceAtoms([]);
    const region = connectionSpace('ipv4', atoms.all);
    return traceRegion(marks, { family: 'ipv4', hook: 'output', atoms }, region, budgetOf(1_000_000, maxPending));
  }

  it('past the bound on waiting regions the rest ends unknown, never decided', () => {
    const pieces = trace(8);
    const waiting = pieces.filter(
      (piece) => piece.outcome.kind === 'unknown' && piece.outcome.why.includes('regions wait to be traced'),
    );
    expect(waiting.length).toBeGreaterThan(0);
  });

  it('with room for them the same table is decided everywhere', () => {
    expect(trace(100_000).every((piece) => piece.outcome.kind === 'redirect')).toBe(true);
  });
});
