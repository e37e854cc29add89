import type { Ruleset } from '../rules/model.js';
import { pathOf } from './flow.js';
import { atomOf, buildInterfaceAtoms } from './interface-atoms.js';
import { interfacePatterns } from './interface-patterns.js';
import { span } from './interval-set.js';
import { ZERO_MARK } from './mark-set.js';
import { sameOutcome, type TraceResult } from './outcome.js';
import type { Packet } from './packet.js';
import { CT_STATES, PROTOCOLS, type Region } from './region.js';
import { budgetOf, traceRegion } from './trace-region.js';

/** One packet's work bound: far above any real ruleset, far below a hang. */
const PACKET_BUDGET = 1_000_000;

/**
 * Where one packet ends up: the region tracer run on a region of exactly that packet, so a sample
 * and a region are answered by the same code. An unmodelled rule that makes the packet's outcome
 * depend on it gives "unknown", naming the rule; one that cannot change it does not matter.
 */
export function tracePacket(ruleset: Ruleset, packet: Packet): TraceResult {
  const name = (packet.hook === 'output' ? packet.outInterface : packet.inInterface) ?? '';
  const atoms = buildInterfaceAtoms([...interfacePatterns(ruleset), name]);
  const one = (value: number | bigint): readonly [bigint, bigint] => [BigInt(value), BigInt(value)];
  const region: Region = {
    protocols: 1 << PROTOCOLS.indexOf(packet.protocol),
    saddr: [one(packet.source.value)],
    daddr: [one(packet.destination.value)],
    sport: [one(packet.sourcePort)],
    dport: [one(packet.destinationPort)],
    uid: packet.uid === undefined ? span(0n, 0xffffffffn) : [one(packet.uid)],
    gid: packet.gid === undefined ? span(0n, 0xffffffffn) : [one(packet.gid)],
    // By what the patterns say of the name: a name such as `eth+` is no atom's representative.
    iface: atomOf(atoms, name),
    mark: ZERO_MARK,
    ctmark: ZERO_MARK,
    ctstates: 1 << CT_STATES.indexOf(packet.ctState ?? 'new'),
  };
  const pieces = traceRegion(
    ruleset,
    { family: packet.family, hook: packet.hook, atoms },
    region,
    budgetOf(PACKET_BUDGET),
  );
  const first = pieces[0];
  if (!first)
    return { outcome: { kind: 'unknown', why: 'no chain decided the packet' }, path: [], decidedBy: undefined };
  const rule = first.assumed[0];
  const agree = pieces.every(
    // sameOutcome, not JSON: a DNAT's address holds a bigint, which JSON.stringify throws on.
    (piece) => sameOutcome(piece.outcome, first.outcome),
  );
  if (agree || !rule) return { outcome: first.outcome, path: pathOf(first.steps), decidedBy: first.decidedBy };
  const undecided = pieces.find((piece) => piece.outcome.kind === 'unknown') ?? first;
  if (undecided.outcome.kind === 'unknown' && undecided.assumed.length === 0)
    return { outcome: undecided.outcome, path: pathOf(undecided.steps), decidedBy: undecided.decidedBy };
  return {
    outcome: { kind: 'unknown', why: `cannot evaluate a match of ${rule.text}`, rule },
    path: pathOf(first.steps),
    decidedBy: rule,
  };
}
