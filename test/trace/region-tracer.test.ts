import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIp } from '../../src/addr/ip.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { mergeRuleSources } from '../../src/rules/merge.js';
import type { Backend, Provenance, Ruleset } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { pathOf } from '../../src/trace/flow.js';
import { atomOf, buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import { interfacePatterns } from '../../src/trace/interface-patterns.js';
import { span, type IntervalSet } from '../../src/trace/interval-set.js';
import { ANY_MARK, intersectMarks, markCube, ZERO_MARK } from '../../src/trace/mark-set.js';
import { cidrSpan, type TraceFrame } from '../../src/trace/match-constraint.js';
import type { Outcome } from '../../src/trace/outcome.js';
import type { TraceHook } from '../../src/trace/packet.js';
import { bitsOf, narrowing, PROTOCOLS, type Constraint, type Region } from '../../src/trace/region.js';
import { tracePacket } from '../../src/trace/trace.js';
import { budgetOf, traceRegion, traceRegionInto, type Piece } from '../../src/trace/trace-region.js';
import { CORPUS } from '../explain/corpus.js';
import { inboundPacket as inbound, ip, outboundPacket as out } from './sample-packets.js';
import { connectionSpace } from '../../src/trace/connection-space.js';

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

// Where each piece of a region ends up and why (the rule or policy that decided it, the path, the
// assumptions), how tables of one hook combine, and where the work and memory bounds cut in.

const TCP = bitsOf(PROTOCOLS, ['tcp']);
const UDP = bitsOf(PROTOCOLS, ['udp']);
const address = (text: string): bigint => (parseIp(text) as { value: bigint }).value;
const cidr = (text: string): IntervalSet => {
  const [base, prefix] = text.split('/');
  return cidrSpan(address(base as string), Number(prefix), 'ipv4');
};
const port = (from: number, to = from): IntervalSet => span(BigInt(from), BigInt(to));

/** An iptables-save dump of the IPv4 tables (`*table`, chains, rules, COMMIT, as the tool prints them). */
function iptables(lines: readonly string[], backend: Exclude<Backend, 'nftables'> = 'iptables-nft'): Ruleset {
  const parsed = parseIptablesSave([...lines, ''].join('\n'), { backend, family: 'ipv4', source: `${backend}-save` });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { tables: parsed.tables };
}

/** The nat table with its built-in chains and the given user chains and rules. */
const natLines = (rules: readonly string[], chains: readonly string[] = []): string[] => [
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':INPUT ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  ':POSTROUTING ACCEPT [0:0]',
  ...chains.map((chain) => `:${chain} - [0:0]`),
  ...rules,
  'COMMIT',
];
const mangleLines = (rules: readonly string[], chains: readonly string[] = []): string[] => [
  '*mangle',
  ':PREROUTING ACCEPT [0:0]',
  ':INPUT ACCEPT [0:0]',
  ':FORWARD ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  ':POSTROUTING ACCEPT [0:0]',
  ...chains.map((chain) => `:${chain} - [0:0]`),
  ...rules,
  'COMMIT',
];

function nft(document: unknown): Ruleset {
  const parsed = parseNftJson(JSON.stringify(document), 'nft -j list ruleset');
  if (!parsed.ok) throw new Error(parsed.error.message);
  return mergeRuleSources([{ backend: 'nftables', tables: parsed.tables }]).ruleset;
}

const corpus = (dir: string, file: string): string => readFileSync(path.join(CORPUS, dir, file), 'utf8');

function frameOf(ruleset: Ruleset, hook: TraceHook): TraceFrame {
  return { family: 'ipv4', hook, atoms: buildInterfaceAtoms(interfacePatterns(ruleset)) };
}

/** Every packet of the hook: TCP and UDP, any address, port, owner and interface, any mark, state NEW. */
function spaceOf(frame: TraceFrame): Region {
  return { ...connectionSpace('ipv4', frame.atoms.all), protocols: TCP | UDP };
}

/** How a report names a rule or policy: table, chain, position and text. */
const named = (at: Provenance | undefined): string | undefined =>
  at ? `${at.table} ${at.chain} #${at.position} ${at.text}` : undefined;

interface Seen {
  readonly region: Constraint;
  readonly outcome: Outcome | string;
  readonly decidedBy: string | undefined;
  readonly path: readonly string[];
  readonly assumed: readonly string[];
}

/** A piece as a reader checks it: the fields its region narrows, what decided it, the rules on the way. */
function seen(piece: Piece, space: Region): Seen {
  const outcome =
    piece.outcome.kind === 'unknown'
      ? `unknown: ${piece.outcome.why}${piece.outcome.rule ? ` [${named(piece.outcome.rule)}]` : ''}`
      : piece.outcome;
  return {
    region: narrowing(piece.region, space),
    outcome,
    decidedBy: named(piece.decidedBy),
    path: pathOf(piece.steps).map(
      (step) =>
        `${step.effect} ${step.at.table} ${step.at.chain} #${step.at.position}${step.note ? `: ${step.note}` : ''}`,
    ),
    assumed: piece.assumed.map(named) as string[],
  };
}

function trace(
  ruleset: Ruleset,
  hook: TraceHook,
  over: Partial<Region> = {},
  limit = 100_000,
  maxPending?: number,
): { pieces: Piece[]; seen: Seen[]; space: Region } {
  const frame = frameOf(ruleset, hook);
  const space = { ...spaceOf(frame), ...over };
  const pieces = traceRegion(ruleset, frame, space, budgetOf(limit, maxPending));
  return { pieces, seen: pieces.map((piece) => seen(piece, space)), space };
}

const LINKERD = iptables(corpus('linkerd/cni-default', 'iptables-nft-save.v4.txt').trimEnd().split('\n'));
const NOT_PROXY = [
  [0n, 2101n],
  [2103n, 0xffffffffn],
] as IntervalSet;

describe('the Linkerd capture over the whole OUTPUT space: jump, RETURN, falling off a chain, policy', () => {
  it('each piece names the rule that let it through: a RETURN, the REDIRECT, or the policy when it fell off the chain', () => {
    const lo = atomOf(frameOf(LINKERD, 'output').atoms, 'lo');
    const other = atomOf(frameOf(LINKERD, 'output').atoms, 'eth0');
    const rule = (position: number): string =>
      `nat PROXY_INIT_OUTPUT #${position} ${LINKERD.tables[0]?.chains.get('PROXY_INIT_OUTPUT')?.rules[position - 1]?.provenance.text}`;
    expect(trace(LINKERD, 'output').seen).toEqual([
      {
        region: { uid: port(2102) },
        outcome: { kind: 'accept' },
        decidedBy: rule(1),
        path: ['jump nat OUTPUT #1', 'return nat PROXY_INIT_OUTPUT #1', 'policy nat OUTPUT #0'],
        assumed: [],
      },
      {
        region: { uid: NOT_PROXY, iface: lo },
        outcome: { kind: 'accept' },
        decidedBy: rule(2),
        path: ['jump nat OUTPUT #1', 'return nat PROXY_INIT_OUTPUT #2', 'policy nat OUTPUT #0'],
        assumed: [],
      },
      {
        region: { protocols: TCP, uid: NOT_PROXY, iface: other },
        outcome: { kind: 'redirect', port: 4140 },
        decidedBy: rule(3),
        path: ['jump nat OUTPUT #1', 'verdict nat PROXY_INIT_OUTPUT #3'],
        assumed: [],
      },
      {
        region: { protocols: UDP, uid: NOT_PROXY, iface: other },
        outcome: { kind: 'accept' },
        decidedBy: 'nat OUTPUT #0 policy ACCEPT of OUTPUT',
        path: ['jump nat OUTPUT #1', 'policy nat OUTPUT #0'],
        assumed: [],
      },
    ]);
  });

  it('traceRegionInto hands over the same pieces, in the same order, one by one', () => {
    const frame = frameOf(LINKERD, 'output');
    const emitted: Piece[] = [];
    traceRegionInto(LINKERD, frame, spaceOf(frame), budgetOf(1000), (piece) => emitted.push(piece));
    expect(emitted).toEqual(trace(LINKERD, 'output').pieces);
  });

  it('a budget holds its limit twice (what is left and the whole) and 20,000 waiting regions unless told', () => {
    const plain = { sinceClock: 0, expired: false, deadline: undefined };
    expect(budgetOf(250)).toMatchObject({ remaining: 250, limit: 250, maxPending: 20_000, ...plain });
    expect(budgetOf(250, 8)).toMatchObject({ remaining: 250, limit: 250, maxPending: 8, ...plain });
    const clock = { at: 7, now: () => 3 };
    expect(budgetOf(250, undefined, clock)).toMatchObject({ maxPending: 20_000, deadline: 7 });
    expect(budgetOf(250, undefined, clock).now()).toBe(3);
  });
});

describe('RETURN in a base chain and the decision of each table', () => {
  it('a RETURN in a base chain ends it by its policy, decided by the RETURN', () => {
    const ruleset = iptables(
      natLines(['-A OUTPUT -d 10.0.0.0/8 -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140']),
    );
    const returned = '-A OUTPUT -d 10.0.0.0/8 -j RETURN';
    expect(trace(ruleset, 'output', { protocols: TCP }).seen).toEqual([
      {
        region: { daddr: cidr('10.0.0.0/8') },
        outcome: { kind: 'accept' },
        decidedBy: `nat OUTPUT #1 ${returned}`,
        path: ['return nat OUTPUT #1', 'policy nat OUTPUT #0'],
        assumed: [],
      },
      {
        region: {
          daddr: span(0n, address('9.255.255.255')).concat(span(address('11.0.0.0'), address('255.255.255.255'))),
        },
        outcome: { kind: 'redirect', port: 4140 },
        decidedBy: 'nat OUTPUT #2 -A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
        path: ['verdict nat OUTPUT #2'],
        assumed: [],
      },
    ]);
  });

  it('a RETURN in an earlier table does not decide a later table that ends by its policy', () => {
    const ruleset = iptables([...mangleLines(['-A OUTPUT -p udp -j RETURN']), ...natLines([])]);
    expect(trace(ruleset, 'output', { protocols: UDP }).seen).toEqual([
      {
        region: {},
        outcome: { kind: 'accept' },
        decidedBy: 'nat OUTPUT #0 policy ACCEPT of OUTPUT',
        path: ['return mangle OUTPUT #1', 'policy mangle OUTPUT #0', 'policy nat OUTPUT #0'],
        assumed: [],
      },
    ]);
  });

  it('an ACCEPT in the filter table after nat does not take over the decision from the nat table', () => {
    const ruleset = iptables([
      ...natLines([]),
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      '-A OUTPUT -p tcp -j ACCEPT',
      'COMMIT',
    ]);
    expect(trace(ruleset, 'output', { protocols: TCP }).seen).toEqual([
      {
        region: {},
        outcome: { kind: 'accept' },
        decidedBy: 'nat OUTPUT #0 policy ACCEPT of OUTPUT',
        path: ['policy nat OUTPUT #0', 'verdict filter OUTPUT #1'],
        assumed: [],
      },
    ]);
  });

  it('a DROP policy drops, decided by the policy; a DROP rule drops, decided by the rule, and ends every later table', () => {
    const ruleset = iptables([
      ...mangleLines(['-A OUTPUT -p udp -j DROP']),
      ...natLines(['-A OUTPUT -j REDIRECT --to-ports 4140']),
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD ACCEPT [0:0]',
      ':OUTPUT DROP [0:0]',
      'COMMIT',
    ]);
    expect(trace(ruleset, 'output').seen).toEqual([
      {
        region: { protocols: UDP },
        outcome: { kind: 'drop' },
        decidedBy: 'mangle OUTPUT #1 -A OUTPUT -p udp -j DROP',
        path: ['verdict mangle OUTPUT #1'],
        assumed: [],
      },
      {
        region: { protocols: TCP },
        outcome: { kind: 'drop' },
        decidedBy: 'filter OUTPUT #0 policy DROP of OUTPUT',
        path: ['policy mangle OUTPUT #0', 'verdict nat OUTPUT #1', 'policy filter OUTPUT #0'],
        assumed: [],
      },
    ]);
  });
});

describe('how the nat tables of one hook combine', () => {
  const redirect = (port: number): string[] => ['-A OUTPUT -p tcp -j REDIRECT --to-ports ' + port];
  const both = (legacyPort: number): Ruleset => ({
    tables: [
      ...iptables(natLines(redirect(4140))).tables,
      ...iptables(natLines(redirect(legacyPort)), 'iptables-legacy').tables,
    ],
  });

  it('two tables at the same priority that bind differently are unknown, naming both rules', () => {
    expect(trace(both(15001), 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      "unknown: tables at the same priority disagree (iptables-nft nat OUTPUT #1 vs iptables-legacy nat OUTPUT #1); the kernel's registration order decides [nat OUTPUT #1 -A OUTPUT -p tcp -j REDIRECT --to-ports 15001]",
    ]);
  });

  it('two tables at the same priority that bind the same way keep the first binding', () => {
    expect(trace(both(4140), 'output', { protocols: TCP }).seen).toEqual([
      {
        region: {},
        outcome: { kind: 'redirect', port: 4140 },
        decidedBy: 'nat OUTPUT #1 -A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
        path: ['verdict nat OUTPUT #1', 'verdict nat OUTPUT #1'],
        assumed: [],
      },
    ]);
    expect(trace(both(4140), 'output', { protocols: TCP }).pieces[0]?.decidedBy?.backend).toBe('iptables-nft');
  });

  const chain = (name: string, type: string, prio: number) => ({
    chain: { family: 'ip', table: 't', name, handle: prio + 200, type, hook: 'output', prio, policy: 'accept' },
  });
  const rule = (chainName: string, handle: number, expr: unknown[]) => ({
    rule: { family: 'ip', table: 't', chain: chainName, handle, expr },
  });
  const tcp = { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } };

  it('a nat chain of a later priority is skipped once a binding is made; a filter chain still runs', () => {
    const ruleset = nft({
      nftables: [
        { table: { family: 'ip', name: 't', handle: 1 } },
        chain('first', 'nat', -100),
        chain('later', 'nat', 0),
        chain('filter', 'filter', 10),
        rule('first', 4, [tcp, { redirect: { port: 4140 } }]),
        rule('later', 5, [{ redirect: { port: 15001 } }]),
        rule('filter', 6, [
          { match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: 25 } },
          { drop: null },
        ]),
      ],
    });
    expect(trace(ruleset, 'output').seen).toEqual([
      {
        region: { protocols: TCP, dport: port(25) },
        outcome: { kind: 'drop' },
        decidedBy: 't filter #1 tcp dport 25 drop',
        path: ['verdict t first #1', 'verdict t filter #1'],
        assumed: [],
      },
      {
        region: { protocols: TCP, dport: port(1, 24).concat(port(26, 65535)) },
        outcome: { kind: 'redirect', port: 4140 },
        decidedBy: 't first #1 meta l4proto tcp redirect to :4140',
        path: ['verdict t first #1', 'policy t filter #0'],
        assumed: [],
      },
      {
        region: { protocols: UDP },
        outcome: { kind: 'redirect', port: 15001 },
        decidedBy: 't later #1 redirect to :15001',
        path: ['policy t first #0', 'verdict t later #1', 'policy t filter #0'],
        assumed: [],
      },
    ]);
  });
});

describe('verdicts: what each target decides, and where it may not', () => {
  it('DNAT binds an address and a port', () => {
    const ruleset = iptables(natLines(['-A OUTPUT -p tcp -j DNAT --to-destination 10.0.0.1:8080']));
    expect(trace(ruleset, 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      { kind: 'dnat', address: { family: 'ipv4', value: address('10.0.0.1') }, port: 8080 },
    ]);
  });

  it('REDIRECT and DNAT outside a nat chain are unknown, naming the rule', () => {
    const ruleset = iptables(
      mangleLines([
        '-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140',
        '-A OUTPUT -p tcp -j DNAT --to-destination 10.0.0.1',
      ]),
    );
    expect(trace(ruleset, 'output', { protocols: TCP }).seen).toEqual([
      {
        region: { dport: port(80) },
        outcome:
          'unknown: redirect outside a nat chain [mangle OUTPUT #1 -A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140]',
        decidedBy: 'mangle OUTPUT #1 -A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140',
        path: ['verdict mangle OUTPUT #1'],
        assumed: [],
      },
      {
        region: { dport: port(1, 79).concat(port(81, 65535)) },
        outcome:
          'unknown: dnat outside a nat chain [mangle OUTPUT #2 -A OUTPUT -p tcp -j DNAT --to-destination 10.0.0.1]',
        decidedBy: 'mangle OUTPUT #2 -A OUTPUT -p tcp -j DNAT --to-destination 10.0.0.1',
        path: ['verdict mangle OUTPUT #2'],
        assumed: [],
      },
    ]);
  });

  it('a target the tracer cannot evaluate is unknown, quoting it', () => {
    const ruleset = iptables(natLines(['-A OUTPUT -p tcp -j REDIRECT --to-ports 15001-15002']));
    expect(trace(ruleset, 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      'unknown: cannot evaluate "-j REDIRECT --to-ports 15001-15002" [nat OUTPUT #1 -A OUTPUT -p tcp -j REDIRECT --to-ports 15001-15002]',
    ]);
  });

  it('an unknown outcome without a rule has no rule at all', () => {
    const ruleset = iptables(natLines(['-A OUTPUT -p tcp -j REDIRECT --to-ports 4140']));
    const [piece] = trace(ruleset, 'output', { protocols: TCP }, 0).pieces;
    expect(piece?.outcome).toStrictEqual({
      kind: 'unknown',
      why: 'the analysis reached its work limit (0 units: rule visits and regions split off); the rules are too many or too tangled to decide',
    });
  });
});

describe('TPROXY: the pieces it decides and the rules on their way', () => {
  const ENV = '--on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1';

  it('iptables TPROXY in PREROUTING ends its table and decides delivery over a later nat binding', () => {
    const ruleset = iptables([
      ...mangleLines([`-A PREROUTING -p tcp -j TPROXY ${ENV}`, '-A PREROUTING -j DROP']),
      ...natLines(['-A PREROUTING -j REDIRECT --to-ports 9']),
    ]);
    expect(trace(ruleset, 'prerouting').seen).toEqual([
      {
        region: { protocols: TCP },
        outcome: { kind: 'tproxy', port: 15006 },
        decidedBy: `mangle PREROUTING #1 -A PREROUTING -p tcp -j TPROXY ${ENV}`,
        path: ['verdict mangle PREROUTING #1: TPROXY to port 15006', 'verdict nat PREROUTING #1'],
        assumed: [],
      },
      {
        region: { protocols: UDP },
        outcome: { kind: 'drop' },
        decidedBy: 'mangle PREROUTING #2 -A PREROUTING -j DROP',
        path: ['verdict mangle PREROUTING #2'],
        assumed: [],
      },
    ]);
  });

  it('TPROXY anywhere but PREROUTING is unknown, naming the rule', () => {
    const ruleset = iptables(mangleLines([`-A OUTPUT -p tcp -j TPROXY ${ENV}`]));
    expect(trace(ruleset, 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      `unknown: TPROXY outside PREROUTING [mangle OUTPUT #1 -A OUTPUT -p tcp -j TPROXY ${ENV}]`,
    ]);
  });

  it("nft's tproxy statement does not end the rule: Istio's mark and accept after it apply", () => {
    const ruleset = nft(JSON.parse(corpus('istio-nftables/tproxy', 'nft-list-ruleset.json')));
    const frame = frameOf(ruleset, 'prerouting');
    const packet = {
      protocols: TCP,
      daddr: cidr('10.0.0.2/32'),
      dport: port(8080),
      iface: atomOf(frame.atoms, 'eth0'),
      mark: ZERO_MARK,
    };
    const [piece, ...rest] = trace(ruleset, 'prerouting', packet).pieces;
    expect(rest).toEqual([]);
    expect(piece?.outcome).toEqual({ kind: 'tproxy', port: 15006 });
    expect(piece?.region.mark).toEqual(markCube(0x539, 0xffffffff));
    expect(seen(piece as Piece, spaceOf(frame)).path.slice(-5)).toEqual([
      'jump istio-proxy-mangle istio-inbound #6',
      'matched istio-proxy-mangle istio-tproxy #1: TPROXY to port 15006',
      'matched istio-proxy-mangle istio-tproxy #1: sets the packet mark',
      'verdict istio-proxy-mangle istio-tproxy #1',
      'policy istio-proxy-nat prerouting #0',
    ]);
  });
});

describe('marks: set, save to the connection, restore', () => {
  it('each MARK and CONNMARK action rewrites the region and is a step of the path', () => {
    const ruleset = iptables([
      ...mangleLines([
        '-A OUTPUT -j MARK --set-xmark 0x1/0xffffffff',
        '-A OUTPUT -j CONNMARK --save-mark --nfmask 0xffffffff --ctmask 0xffffffff',
        '-A OUTPUT -j MARK --set-xmark 0x539/0xffffffff',
        '-A OUTPUT -j CONNMARK --restore-mark --nfmask 0xffffffff --ctmask 0xffffffff',
      ]),
      ...natLines(['-A OUTPUT -m mark --mark 0x1 -j RETURN', '-A OUTPUT -j REDIRECT --to-ports 4140']),
    ]);
    expect(trace(ruleset, 'output', { protocols: TCP }).seen).toEqual([
      {
        region: { mark: markCube(1, 0xffffffff), ctmark: markCube(1, 0xffffffff) },
        outcome: { kind: 'accept' },
        decidedBy: 'nat OUTPUT #1 -A OUTPUT -m mark --mark 0x1 -j RETURN',
        path: [
          'matched mangle OUTPUT #1: sets the packet mark',
          'matched mangle OUTPUT #2: saves the mark to the connection',
          'matched mangle OUTPUT #3: sets the packet mark',
          'matched mangle OUTPUT #4: restores the connection mark',
          'policy mangle OUTPUT #0',
          'return nat OUTPUT #1',
          'policy nat OUTPUT #0',
        ],
        assumed: [],
      },
    ]);
  });
});

describe('rules that only log change nothing', () => {
  it('a LOG rule does not split the region', () => {
    const ruleset = iptables(
      natLines(['-A OUTPUT -d 10.0.0.0/8 -j LOG', '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140']),
    );
    expect(trace(ruleset, 'output', { protocols: TCP }).seen).toEqual([
      {
        region: {},
        outcome: { kind: 'redirect', port: 4140 },
        decidedBy: 'nat OUTPUT #2 -A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
        path: ['verdict nat OUTPUT #2'],
        assumed: [],
      },
    ]);
  });

  it('an nft rule that logs and then redirects redirects', () => {
    const ruleset = nft({
      nftables: [
        { table: { family: 'ip', name: 't', handle: 1 } },
        {
          chain: {
            family: 'ip',
            table: 't',
            name: 'out',
            handle: 2,
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
            handle: 3,
            expr: [
              { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } },
              { log: null },
              { redirect: { port: 4140 } },
            ],
          },
        },
      ],
    });
    expect(trace(ruleset, 'output', { protocols: TCP }).seen).toEqual([
      {
        region: {},
        outcome: { kind: 'redirect', port: 4140 },
        decidedBy: 't out #1 meta l4proto tcp log redirect to :4140',
        path: ['verdict t out #1'],
        assumed: [],
      },
    ]);
  });
});

describe('jumps that cannot be followed', () => {
  it('a jump to a chain the table does not hold is unknown, naming it', () => {
    const ruleset = nft({
      nftables: [
        { table: { family: 'ip', name: 't', handle: 1 } },
        {
          chain: {
            family: 'ip',
            table: 't',
            name: 'out',
            handle: 2,
            type: 'nat',
            hook: 'output',
            prio: -100,
            policy: 'accept',
          },
        },
        { rule: { family: 'ip', table: 't', chain: 'out', handle: 3, expr: [{ jump: { target: 'mesh' } }] } },
      ],
    });
    expect(trace(ruleset, 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      'unknown: jump to chain mesh, which does not exist [t out #1 jump mesh]',
    ]);
  });

  it('a jump into a loop is unknown, naming the cycle', () => {
    const ruleset = iptables(natLines(['-A OUTPUT -j A', '-A A -j B', '-A B -j A'], ['A', 'B']));
    expect(trace(ruleset, 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      'unknown: jump to chain A enters a loop (A -> B -> A); the kernel refuses such a table [nat OUTPUT #1 -A OUTPUT -j A]',
    ]);
  });

  /** OUTPUT jumps to C1, each Ck to the next, and the last one redirects. */
  const nested = (depth: number): Ruleset => {
    const names = Array.from({ length: depth }, (_, k) => `C${k + 1}`);
    const jumps = names.map((name, k) => `-A ${k === 0 ? 'OUTPUT' : names[k - 1]} -j ${name}`);
    return iptables(natLines([...jumps, `-A ${names[depth - 1]} -j REDIRECT --to-ports 4140`], names));
  };

  it('chains nest 64 deep, not 65', () => {
    expect(trace(nested(64), 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      { kind: 'redirect', port: 4140 },
    ]);
    expect(trace(nested(65), 'output', { protocols: TCP }).seen.map((piece) => piece.outcome)).toEqual([
      'unknown: chains nest too deep [nat C64 #1 -A C64 -j C65]',
    ]);
  });
});

describe('unmodelled matches are followed both ways, six at most', () => {
  const LOCAL = '-m addrtype --dst-type LOCAL';

  it('each way is a piece recording the assumption', () => {
    const ruleset = iptables(
      natLines([`-A OUTPUT ${LOCAL} -j RETURN`, '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140']),
    );
    const at = `nat OUTPUT #1 -A OUTPUT ${LOCAL} -j RETURN`;
    expect(trace(ruleset, 'output', { protocols: TCP }).seen).toEqual([
      {
        region: {},
        outcome: { kind: 'accept' },
        decidedBy: at,
        path: [`assumed nat OUTPUT #1: assumed matching: ${LOCAL}`, 'return nat OUTPUT #1', 'policy nat OUTPUT #0'],
        assumed: [at],
      },
      {
        region: {},
        outcome: { kind: 'redirect', port: 4140 },
        decidedBy: 'nat OUTPUT #2 -A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
        path: [`assumed nat OUTPUT #1: assumed not matching: ${LOCAL}`, 'verdict nat OUTPUT #2'],
        assumed: [at],
      },
    ]);
  });

  const marking = (count: number): Ruleset =>
    iptables(
      natLines([
        ...Array.from(
          { length: count },
          (_, k) => `-A OUTPUT ${LOCAL} -j MARK --set-xmark 0x${(1 << k).toString(16)}/0x${(1 << k).toString(16)}`,
        ),
        '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
      ]),
    );

  it('six are assumed both ways; at the seventh the region is unknown', () => {
    const six = trace(marking(6), 'output', { protocols: TCP }).pieces;
    expect(six).toHaveLength(64);
    expect(six.every((piece) => piece.outcome.kind === 'redirect' && piece.assumed.length === 6)).toBe(true);
    const seven = trace(marking(7), 'output', { protocols: TCP }).seen;
    expect(seven).toHaveLength(64);
    expect(new Set(seven.map((piece) => piece.outcome))).toEqual(
      new Set([`unknown: cannot evaluate "${LOCAL}" [nat OUTPUT #7 -A OUTPUT ${LOCAL} -j MARK --set-xmark 0x40/0x40]`]),
    );
  });
});

const limitWhy = (units: number): string =>
  `unknown: the analysis reached its work limit (${units} units: rule visits and regions split off); the rules are too many or too tangled to decide`;

describe('the work bound, to the unit', () => {
  const ruleset = iptables(
    natLines(['-A OUTPUT -d 10.0.0.0/8 -j RETURN', '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140']),
  );
  const rest = span(0n, address('9.255.255.255')).concat(span(address('11.0.0.0'), address('255.255.255.255')));
  const returned = {
    region: { daddr: cidr('10.0.0.0/8') },
    outcome: { kind: 'accept' },
    decidedBy: 'nat OUTPUT #1 -A OUTPUT -d 10.0.0.0/8 -j RETURN',
    path: ['return nat OUTPUT #1', 'policy nat OUTPUT #0'],
    assumed: [],
  };

  it('one unit per rule visited and per region split off; a region waiting when none is left is unknown', () => {
    // 1 visit and 1 split-off region; the region split off then needs a unit left to start.
    expect(trace(ruleset, 'output', { protocols: TCP }, 2).seen).toEqual([
      returned,
      { region: { daddr: rest }, outcome: limitWhy(2), decidedBy: undefined, path: [], assumed: [] },
    ]);
    expect(trace(ruleset, 'output', { protocols: TCP }, 3).seen.map((piece) => piece.outcome)).toEqual([
      { kind: 'accept' },
      { kind: 'redirect', port: 4140 },
    ]);
  });

  it('the last unit may be spent on a rule visit, not more', () => {
    expect(trace(ruleset, 'output', { protocols: TCP }, 1).seen.map((piece) => piece.outcome)).toEqual([
      { kind: 'accept' },
      limitWhy(1),
    ]);
  });

  it('a rule visit past the limit ends the region there, decided by that rule', () => {
    const far = { protocols: TCP, daddr: cidr('192.0.2.0/24') };
    expect(trace(ruleset, 'output', far, 1).seen).toEqual([
      {
        region: {},
        outcome: limitWhy(1),
        decidedBy: 'nat OUTPUT #2 -A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
        path: [],
        assumed: [],
      },
    ]);
  });

  it('splitting a region of 32 intervals or more costs one unit more per 32', () => {
    const addresses: IntervalSet = Array.from({ length: 32 }, (_, k) => [BigInt(k * 2), BigInt(k * 2)] as const);
    const web = iptables(natLines(['-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140']));
    // 1 visit + 2 for the region split off, and one unit left for it to start.
    expect(trace(web, 'output', { protocols: TCP, daddr: addresses }, 4).seen.map((piece) => piece.outcome)).toEqual([
      { kind: 'redirect', port: 4140 },
      { kind: 'accept' },
    ]);
    expect(trace(web, 'output', { protocols: TCP, daddr: addresses }, 3).seen.map((piece) => piece.outcome)).toEqual([
      { kind: 'redirect', port: 4140 },
      limitWhy(3),
    ]);
  });
});

describe('the bound on regions waiting to be traced', () => {
  const ruleset = iptables(natLines(['-A OUTPUT -d 10.0.0.0/8 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140']));
  const why = (most: number): string =>
    `unknown: more than ${most} regions wait to be traced; the rules split the packet space too finely to decide [nat OUTPUT #1 -A OUTPUT -d 10.0.0.0/8 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140]`;

  it('a split that leaves as many regions waiting as the bound allows is traced in full', () => {
    // The rule leaves three regions outside: other addresses, UDP to 10/8, TCP to 10/8 on other ports.
    expect(trace(ruleset, 'output', {}, 1000, 3).seen.map((piece) => piece.outcome)).toEqual([
      { kind: 'redirect', port: 4140 },
      { kind: 'accept' },
      { kind: 'accept' },
      { kind: 'accept' },
    ]);
  });

  it('one more than the bound ends unknown, naming the rule that split it off', () => {
    expect(trace(ruleset, 'output', {}, 1000, 2).seen.map((piece) => [piece.outcome, piece.region])).toEqual([
      [why(2), { daddr: cidr('10.0.0.0/8'), protocols: TCP, dport: port(1, 79).concat(port(81, 65535)) }],
      [
        { kind: 'redirect', port: 4140 },
        { daddr: cidr('10.0.0.0/8'), protocols: TCP, dport: port(80) },
      ],
      [{ kind: 'accept' }, { daddr: cidr('10.0.0.0/8'), protocols: UDP }],
      [
        { kind: 'accept' },
        { daddr: span(0n, address('9.255.255.255')).concat(span(address('11.0.0.0'), address('255.255.255.255'))) },
      ],
    ]);
  });
});

describe('the address index: a region narrowed to a few destinations visits only the rules that can meet it', () => {
  const returns = (count: number, from = 1): string[] =>
    Array.from(
      { length: count },
      (_, k) => `-A OUTPUT -d 10.0.${Math.floor((from + k) / 250)}.${((from + k) % 250) + 1}/32 -j RETURN`,
    );
  const udpReturns = (count: number): string[] => Array.from({ length: count }, () => '-A OUTPUT -p udp -j RETURN');
  const capture = '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140';
  const outcomes = (ruleset: Ruleset, over: Partial<Region>, limit: number) =>
    trace(ruleset, 'output', { protocols: TCP, ...over }, limit).seen.map((piece) => piece.outcome);
  const redirected = [{ kind: 'redirect', port: 4140 }];
  /** Four destinations, none of them excluded: the most a region may have and still be indexed. */
  const four: IntervalSet = ['192.0.2.1', '192.0.2.3', '192.0.2.5', '192.0.2.7'].map(
    (text) => [address(text), address(text)] as const,
  );

  it('64 rules from the position on are indexed: a region past 63 RETURNs visits the capture alone', () => {
    const ruleset = iptables(natLines([...returns(63), capture]));
    expect(outcomes(ruleset, { daddr: four }, 1)).toEqual(redirected);
    const fifth: IntervalSet = [...four, [address('192.0.2.9'), address('192.0.2.9')]];
    expect(outcomes(ruleset, { daddr: fifth }, 63)).toEqual([limitWhy(63)]);
  });

  it('fewer than 64 rules from the position on are walked one by one', () => {
    // The MARK rule moves the region to position 2, with 63 rules left.
    const ruleset = iptables(natLines(['-A OUTPUT -j MARK --set-xmark 0x1/0x1', ...returns(62), capture]));
    expect(outcomes(ruleset, { daddr: four }, 2)).toEqual([limitWhy(2)]);
    expect(outcomes(ruleset, { daddr: four }, 64)).toEqual(redirected);
  });

  it('after a rule that goes on, the index answers from the next position on, that rule included', () => {
    const ruleset = iptables(
      natLines([
        '-A OUTPUT -j MARK --set-xmark 0x1/0x1',
        '-A OUTPUT -d 192.0.2.1/32 -j REDIRECT --to-ports 9',
        ...returns(63),
        capture,
      ]),
    );
    expect(outcomes(ruleset, { daddr: cidr('192.0.2.1/32') }, 2)).toEqual([{ kind: 'redirect', port: 9 }]);
    expect(outcomes(ruleset, { daddr: cidr('192.0.2.2/32') }, 2)).toEqual(redirected);
  });

  it('a region spanning half of the address space is indexed; one address more is not', () => {
    const ruleset = iptables(
      natLines([...Array.from({ length: 63 }, (_, k) => `-A OUTPUT -d 192.0.${k}.1/32 -j RETURN`), capture]),
    );
    expect(outcomes(ruleset, { daddr: span(1n, 1n + (1n << 31n)) }, 1)).toEqual(redirected);
    expect(outcomes(ruleset, { daddr: span(1n, 2n + (1n << 31n)) }, 63)).toEqual([limitWhy(63)]);
  });

  it('the index is used while at most half of the rules test no destination', () => {
    const half = iptables(natLines([...udpReturns(31), ...returns(32), capture]));
    expect(outcomes(half, { daddr: four }, 32)).toEqual(redirected);
    const more = iptables(natLines([...udpReturns(32), ...returns(31), capture]));
    expect(outcomes(more, { daddr: four }, 33)).toEqual([limitWhy(33)]);
    expect(outcomes(more, { daddr: four }, 64)).toEqual(redirected);
  });
});

describe('falling off the end of a chain goes back to the rule after the jump', () => {
  it('after a jump, the calling chain goes on; after a goto, the chain that called the caller does', () => {
    const ruleset = iptables(
      natLines(
        [
          '-A OUTPUT -j A',
          '-A OUTPUT -p tcp -j REDIRECT --to-ports 9',
          '-A A -p udp -g B',
          '-A A -p udp -j REDIRECT --to-ports 7',
          '-A B -d 10.0.0.0/8 -j RETURN',
        ],
        ['A', 'B'],
      ),
    );
    expect(trace(ruleset, 'output').seen).toEqual([
      {
        region: { protocols: UDP, daddr: cidr('10.0.0.0/8') },
        outcome: { kind: 'accept' },
        decidedBy: 'nat B #1 -A B -d 10.0.0.0/8 -j RETURN',
        path: ['jump nat OUTPUT #1', 'goto nat A #1', 'return nat B #1', 'policy nat OUTPUT #0'],
        assumed: [],
      },
      {
        region: {
          protocols: UDP,
          daddr: span(0n, address('9.255.255.255')).concat(span(address('11.0.0.0'), address('255.255.255.255'))),
        },
        outcome: { kind: 'accept' },
        decidedBy: 'nat OUTPUT #0 policy ACCEPT of OUTPUT',
        path: ['jump nat OUTPUT #1', 'goto nat A #1', 'policy nat OUTPUT #0'],
        assumed: [],
      },
      {
        region: { protocols: TCP },
        outcome: { kind: 'redirect', port: 9 },
        decidedBy: 'nat OUTPUT #2 -A OUTPUT -p tcp -j REDIRECT --to-ports 9',
        path: ['jump nat OUTPUT #1', 'verdict nat OUTPUT #2'],
        assumed: [],
      },
    ]);
  });
});

describe('the address index, past its last candidate', () => {
  it('a region no indexed rule stops walks past the last of them to the policy', () => {
    const ruleset = iptables(
      natLines([
        ...Array.from({ length: 63 }, (_, k) => `-A OUTPUT -d 10.0.0.${k + 1}/32 -j RETURN`),
        '-A OUTPUT -p tcp -j REDIRECT --to-ports 4140',
      ]),
    );
    expect(trace(ruleset, 'output', { protocols: UDP, daddr: cidr('192.0.2.1/32') }, 1).seen).toEqual([
      {
        region: {},
        outcome: { kind: 'accept' },
        decidedBy: 'nat OUTPUT #0 policy ACCEPT of OUTPUT',
        path: ['policy nat OUTPUT #0'],
        assumed: [],
      },
    ]);
  });
});

describe('RETURN from a chain that was jumped to', () => {
  it('goes on with the rule after the jump, which then decides', () => {
    const ruleset = iptables(
      natLines(['-A OUTPUT -j MESH', '-A OUTPUT -j REDIRECT --to-ports 9', '-A MESH -p udp -j RETURN'], ['MESH']),
    );
    expect(trace(ruleset, 'output').seen).toEqual([
      {
        region: { protocols: UDP },
        outcome: { kind: 'redirect', port: 9 },
        decidedBy: 'nat OUTPUT #2 -A OUTPUT -j REDIRECT --to-ports 9',
        path: ['jump nat OUTPUT #1', 'return nat MESH #1', 'verdict nat OUTPUT #2'],
        assumed: [],
      },
      {
        region: { protocols: TCP },
        outcome: { kind: 'redirect', port: 9 },
        decidedBy: 'nat OUTPUT #2 -A OUTPUT -j REDIRECT --to-ports 9',
        path: ['jump nat OUTPUT #1', 'verdict nat OUTPUT #2'],
        assumed: [],
      },
    ]);
  });
});
