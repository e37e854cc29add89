import type { Chain, Provenance, Rule, Ruleset, Table } from '../rules/model.js';
import { evaluateMatch, type PacketState } from './evaluate-match.js';
import { sameOutcome, type Outcome, type TraceResult, type TraceStep } from './outcome.js';
import type { Packet } from './packet.js';

/** Deeper than any real ruleset; the kernel itself refuses jump loops, a parsed dump may not. */
const MAX_DEPTH = 64;
/** Bounds one traversal so a crafted dump cannot hang the tracer. */
const MAX_STEPS = 1_000_000;
/** Each rule the tracer cannot evaluate doubles the work: both answers are tried. */
const MAX_ASSUMPTIONS = 6;

/**
 * Answers "where does this packet end up?" across every table and backend hooked where the packet
 * passes, in priority order.
 *
 * How tables combine: chains run in hook-priority order (raw -300, mangle -150, nat -100, as the
 * kernel orders them whichever backend registered them). The NAT core runs nat chains until one
 * makes a binding, so the first REDIRECT/DNAT counts and later nat chains are skipped; nat chains
 * of the same priority from different tables (iptables-legacy next to iptables-nft, or an nft
 * `inet` table) run in registration order, which no dump shows, so when they would NAT the packet
 * differently the answer is "unknown", never a guess. A DROP anywhere wins; a TPROXY in mangle
 * decides delivery for inbound packets.
 *
 * A rule with a match the tracer does not model is evaluated both ways: if the outcome is the
 * same either way it does not matter, otherwise the answer is "unknown" naming that rule.
 */
export function tracePacket(ruleset: Ruleset, packet: Packet): TraceResult {
  return traceForking(ruleset, packet, new Map());
}

class Undecided {
  constructor(
    readonly rule: Rule,
    readonly text: string,
    readonly path: readonly TraceStep[],
  ) {}
}

function traceForking(ruleset: Ruleset, packet: Packet, assumptions: ReadonlyMap<Rule, boolean>): TraceResult {
  try {
    return traceAssuming(ruleset, packet, assumptions);
  } catch (error) {
    if (!(error instanceof Undecided)) throw error;
    const why = `cannot evaluate "${error.text}"`;
    if (assumptions.size >= MAX_ASSUMPTIONS) {
      return { outcome: { kind: 'unknown', why, rule: error.rule.provenance }, path: error.path, decidedBy: error.rule.provenance };
    }
    const ifTrue = traceForking(ruleset, packet, new Map([...assumptions, [error.rule, true]]));
    const ifFalse = traceForking(ruleset, packet, new Map([...assumptions, [error.rule, false]]));
    if (sameOutcome(ifTrue.outcome, ifFalse.outcome)) return ifFalse;
    const inner = ifTrue.outcome.kind === 'unknown' ? ifTrue : ifFalse.outcome.kind === 'unknown' ? ifFalse : undefined;
    if (inner) return inner;
    return { outcome: { kind: 'unknown', why, rule: error.rule.provenance }, path: error.path, decidedBy: error.rule.provenance };
  }
}

interface HookedChain {
  readonly table: Table;
  readonly chain: Chain;
  readonly priority: number;
  readonly type: 'nat' | 'filter' | 'route';
  readonly policy: 'accept' | 'drop';
}

type ChainEnd =
  | { readonly kind: 'accept' | 'drop'; readonly decidedBy: Provenance }
  | { readonly kind: 'nat'; readonly outcome: Outcome; readonly decidedBy: Provenance }
  | { readonly kind: 'unknown'; readonly outcome: Outcome; readonly decidedBy: Provenance | undefined };

interface Context {
  readonly packet: Packet;
  readonly state: PacketState;
  readonly path: TraceStep[];
  readonly assumptions: ReadonlyMap<Rule, boolean>;
  steps: number;
  tproxy: { port: number; at: Provenance } | undefined;
}

function hookedChains(ruleset: Ruleset, packet: Packet): HookedChain[] {
  const hooked: HookedChain[] = [];
  for (const table of ruleset.tables) {
    if (table.family !== 'inet' && table.family !== packet.family) continue;
    for (const chain of table.chains.values()) {
      if (!chain.base || chain.base.hook !== packet.hook) continue;
      hooked.push({ table, chain, priority: chain.base.priority, type: chain.base.type, policy: chain.base.policy });
    }
  }
  // Array.prototype.sort is stable: equal priorities keep the order the tables were read in.
  return hooked.sort((a, b) => a.priority - b.priority);
}

function traceAssuming(ruleset: Ruleset, packet: Packet, assumptions: ReadonlyMap<Rule, boolean>): TraceResult {
  const context: Context = { packet, state: { mark: 0, ctmark: 0 }, path: [], assumptions, steps: 0, tproxy: undefined };
  const chains = hookedChains(ruleset, packet);
  let nat: { outcome: Outcome; decidedBy: Provenance } | undefined;
  let lastDecision: Provenance | undefined;
  for (let index = 0; index < chains.length; ) {
    const priority = (chains[index] as HookedChain).priority;
    const group: HookedChain[] = [];
    while (index < chains.length && (chains[index] as HookedChain).priority === priority) group.push(chains[index++] as HookedChain);
    const natResults: Array<{ outcome: Outcome; decidedBy: Provenance }> = [];
    for (const hooked of group) {
      if (hooked.type === 'nat' && nat) continue;
      const end = runBaseChain(hooked, context);
      if (end.kind === 'unknown') return { outcome: end.outcome, path: context.path, decidedBy: end.decidedBy };
      if (end.kind === 'drop') return { outcome: { kind: 'drop' }, path: context.path, decidedBy: end.decidedBy };
      if (end.kind === 'nat') natResults.push(end);
      else if (hooked.type === 'nat') lastDecision = end.decidedBy;
    }
    const first = natResults[0];
    if (first) {
      const conflict = natResults.find((result) => !sameOutcome(result.outcome, first.outcome));
      if (conflict) {
        const why = `tables at the same priority disagree (${where(first.decidedBy)} vs ${where(conflict.decidedBy)}); the kernel's registration order decides`;
        return { outcome: { kind: 'unknown', why, rule: conflict.decidedBy }, path: context.path, decidedBy: conflict.decidedBy };
      }
      nat = first;
    }
  }
  if (context.tproxy) return { outcome: { kind: 'tproxy', port: context.tproxy.port }, path: context.path, decidedBy: context.tproxy.at };
  if (nat) return { outcome: nat.outcome, path: context.path, decidedBy: nat.decidedBy };
  return { outcome: { kind: 'accept' }, path: context.path, decidedBy: lastDecision };
}

function where(at: Provenance): string {
  return `${at.backend} ${at.table} ${at.chain}${at.position > 0 ? ` #${at.position}` : ''}`;
}

function policyProvenance(hooked: HookedChain): Provenance {
  return {
    backend: hooked.table.backend,
    family: hooked.table.family,
    table: hooked.table.name,
    chain: hooked.chain.name,
    position: 0,
    text: `policy ${hooked.policy.toUpperCase()} of ${hooked.chain.name}`,
  };
}

function unknownEnd(why: string, rule: Provenance | undefined): ChainEnd {
  return { kind: 'unknown', outcome: { kind: 'unknown', why, ...(rule ? { rule } : {}) }, decidedBy: rule };
}

function runBaseChain(hooked: HookedChain, context: Context): ChainEnd {
  const { table } = hooked;
  const frames: Array<{ chain: Chain; next: number }> = [{ chain: hooked.chain, next: 0 }];
  // The last RETURN on the way is the rule that let the packet reach the policy: name it.
  let lastReturn: Provenance | undefined;
  const policy = (): ChainEnd => {
    const at = policyProvenance(hooked);
    context.path.push({ at, effect: 'policy' });
    return { kind: hooked.policy, decidedBy: lastReturn ?? at };
  };
  outer: while (frames.length > 0) {
    const frame = frames[frames.length - 1] as { chain: Chain; next: number };
    if (frame.next >= frame.chain.rules.length) {
      frames.pop();
      if (frames.length === 0) return policy();
      continue;
    }
    const rule = frame.chain.rules[frame.next++] as Rule;
    if (++context.steps > MAX_STEPS) return unknownEnd('the traversal does not end (step limit)', rule.provenance);
    if (!ruleMatches(rule, context)) continue;
    const at = rule.provenance;
    for (const action of rule.actions) {
      switch (action.kind) {
        case 'continue':
          break;
        case 'set-mark':
          context.state.mark = ((context.state.mark & ~action.mask) ^ action.value) >>> 0;
          context.path.push({ at, effect: 'matched', note: 'sets the packet mark' });
          break;
        case 'save-mark':
          context.state.ctmark = context.state.mark;
          context.path.push({ at, effect: 'matched', note: 'saves the mark to the connection' });
          break;
        case 'restore-mark':
          context.state.mark = context.state.ctmark;
          context.path.push({ at, effect: 'matched', note: 'restores the connection mark' });
          break;
        case 'tproxy':
          if (context.packet.hook !== 'prerouting' || hooked.chain.base?.hook !== 'prerouting') return unknownEnd('TPROXY outside PREROUTING', at);
          context.tproxy = { port: action.port, at };
          context.path.push({ at, effect: action.terminal ? 'verdict' : 'matched', note: `TPROXY to port ${action.port}` });
          if (action.terminal) return { kind: 'accept', decidedBy: at };
          break;
        case 'jump':
        case 'goto': {
          const target = table.chains.get(action.chain);
          if (!target) return unknownEnd(`${action.kind} to chain ${action.chain}, which does not exist`, at);
          if (frames.length >= MAX_DEPTH) return unknownEnd('chains nest too deep (a jump loop?)', at);
          context.path.push({ at, effect: action.kind });
          if (action.kind === 'goto') frames.pop();
          frames.push({ chain: target, next: 0 });
          continue outer;
        }
        case 'return':
          context.path.push({ at, effect: 'return' });
          lastReturn = at;
          frames.pop();
          if (frames.length === 0) return policy();
          continue outer;
        case 'accept':
          context.path.push({ at, effect: 'verdict' });
          return { kind: 'accept', decidedBy: at };
        case 'drop':
          context.path.push({ at, effect: 'verdict' });
          return { kind: 'drop', decidedBy: at };
        case 'redirect':
        case 'dnat': {
          if (hooked.type !== 'nat') return unknownEnd(`${action.kind} outside a nat chain`, at);
          context.path.push({ at, effect: 'verdict' });
          const outcome: Outcome =
            action.kind === 'redirect'
              ? { kind: 'redirect', port: action.port ?? context.packet.destinationPort }
              : { kind: 'dnat', address: action.address, port: action.port };
          return { kind: 'nat', outcome, decidedBy: at };
        }
        case 'unknown':
          context.path.push({ at, effect: 'verdict' });
          return unknownEnd(`cannot evaluate "${action.text}"`, at);
      }
    }
  }
  return policy();
}

function ruleMatches(rule: Rule, context: Context): boolean {
  let undecided: string | undefined;
  for (const match of rule.matches) {
    const result = evaluateMatch(match, context.packet, context.state);
    if (result === false) return false;
    if (result === 'unknown') undecided ??= match.kind === 'unknown' ? match.text : match.kind;
  }
  if (undecided === undefined) return true;
  // A rule that only counts or logs changes nothing, whatever its matches say.
  if (rule.actions.every((action) => action.kind === 'continue')) return false;
  const assumed = context.assumptions.get(rule);
  if (assumed !== undefined) {
    context.path.push({ at: rule.provenance, effect: 'assumed', note: `assumed ${assumed ? 'matching' : 'not matching'}: ${undecided}` });
    return assumed;
  }
  throw new Undecided(rule, undecided, [...context.path]);
}
