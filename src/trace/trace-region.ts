import type { Action, Chain, Provenance, Rule, Ruleset } from '../rules/model.js';
import { FAMILY_BITS, type Family } from '../addr/ip.js';
import type { Interval, IntervalSet } from './interval-set.js';
import { buildAddressIndex, candidateRules, type AddressIndex } from './address-index.js';
import { loopingChains } from './chain-loops.js';
import { extended, withStep, type Flow, type Frame, type Steps } from './flow.js';
import { connectionUse, CONNTRACK_PRIORITY, INVALID_STATE, UNTRACKED_STATE, type ConntrackStage } from './conntrack.js';
import { hookedChains, policyProvenance, where, type HookedChain } from './hooked-chains.js';
import { rewriteMarks } from './mark-set.js';
import { ruleConstraint, ruleDestinations, type RuleConstraint, type TraceFrame } from './match-constraint.js';
import { sameOutcome, type Outcome } from './outcome.js';
import { andConstraints, overlaps, splitRegion, type Region } from './region.js';

/** Deeper than any real ruleset; the kernel itself refuses deeper nesting. */
const MAX_DEPTH = 64;
/** Regions split off and not yet traced, at most: about 20 MiB of them at worst. */
const MAX_PENDING = 20_000;
const HALF_SPACE: Readonly<Record<Family, bigint>> = {
  ipv4: 1n << BigInt(FAMILY_BITS.ipv4 - 1),
  ipv6: 1n << BigInt(FAMILY_BITS.ipv6 - 1),
};
/** Rule constraints kept for reuse at once. */
const MAX_CACHED_CONSTRAINTS = 8192;
/** Unmodelled rules one region may be assumed through, each both ways. */
const MAX_ASSUMPTIONS = 6;

/** Shared by every trace of one analysis: the total work, not the work per fork, is bounded. */
export interface Budget {
  remaining: number;
  readonly limit: number;
  /** Split-off regions that may wait to be traced at once: they are the analysis's memory. */
  readonly maxPending: number;
  /** When the analysis must stop (on `now`'s clock): a verdict is due by the caller's deadline. */
  readonly deadline: number | undefined;
  readonly now: () => number;
  /** Units spent since the clock was last read: reading it per rule would cost more than the rule. */
  sinceClock: number;
  /** Stopped by the deadline rather than by the work limit. */
  expired: boolean;
}

/** The clock is read once per this many units: well under a millisecond of work. */
const CLOCK_EVERY = 4096;

export function budgetOf(
  limit: number,
  maxPending: number = MAX_PENDING,
  deadline?: { readonly at: number; readonly now: () => number },
): Budget {
  return {
    remaining: limit,
    limit,
    maxPending,
    deadline: deadline?.at,
    now: deadline?.now ?? (() => 0),
    sinceClock: 0,
    expired: false,
  };
}

/** Spends work units; past the deadline the budget is spent at once, whatever was left of it. */
function charge(budget: Budget, units: number): void {
  budget.remaining -= units;
  budget.sinceClock += units;
  if (budget.sinceClock < CLOCK_EVERY || budget.deadline === undefined) return;
  budget.sinceClock = 0;
  if (budget.now() >= budget.deadline) {
    budget.expired = true;
    budget.remaining = -1;
  }
}

/** A region of packets and where every packet of it ends up. */
export interface Piece {
  readonly region: Region;
  readonly outcome: Outcome;
  readonly decidedBy: Provenance | undefined;
  /** The rules that matched on the way, shared between pieces; `pathOf` lists them. */
  readonly steps: Steps | undefined;
  readonly assumed: readonly Provenance[];
}

/** A chain's address index and its last answer (for the last destination list asked about). */
interface IndexSlot {
  readonly index: AddressIndex;
  daddr: IntervalSet | undefined;
  all: readonly number[];
}

interface Context {
  readonly frame: TraceFrame;
  readonly hooked: readonly HookedChain[];
  readonly looping: ReadonlyMap<Chain, string>;
  readonly constraints: Map<Rule, RuleConstraint>;
  readonly indexes: Map<Chain, IndexSlot>;
  readonly budget: Budget;
  readonly work: Flow[];
  readonly emit: (piece: Piece) => void;
}

/**
 * Where every packet of `region` ends up, as disjoint pieces that cover it exactly. The region
 * is split at each rule into the part the rule matches and the parts it does not, so every packet
 * is accounted for and no packet is sampled. How tables combine is the kernel's: base chains run in
 * priority order; the NAT core keeps the first binding, so later nat chains are skipped; nat chains
 * of equal priority that bind differently are "unknown" (registration order decides, no dump shows
 * it); a DROP ends everything; a TPROXY in PREROUTING decides delivery. A rule the tracer does not
 * model is followed both ways, each way recorded as an assumption.
 */
export function traceRegion(ruleset: Ruleset, frame: TraceFrame, region: Region, budget: Budget): Piece[] {
  const pieces: Piece[] = [];
  traceRegionInto(ruleset, frame, region, budget, (piece) => pieces.push(piece));
  return pieces;
}

/**
 * The same, handing each piece to `emit` as soon as it is decided: a caller that checks pieces as
 * they come never holds them all (a 100k-rule table makes about 600k of them).
 */
export function traceRegionInto(
  ruleset: Ruleset,
  frame: TraceFrame,
  region: Region,
  budget: Budget,
  emit: (piece: Piece) => void,
): void {
  const looping = new Map<Chain, string>();
  for (const table of ruleset.tables) for (const [chain, cycle] of loopingChains(table)) looping.set(chain, cycle);
  const context: Context = {
    frame,
    hooked: hookedChains(ruleset, frame),
    looping,
    constraints: new Map(),
    indexes: new Map(),
    budget,
    work: [],
    emit,
  };
  const start: Flow = {
    region,
    hooked: -1,
    frame: undefined,
    path: undefined,
    assumed: [],
    lastReturn: undefined,
    lastDecision: undefined,
    nat: undefined,
    groupNat: undefined,
    tproxy: undefined,
    untracked: undefined,
    ctstates: undefined,
  };
  enterNextChain(start, context);
  for (let flow = context.work.pop(); flow; flow = context.work.pop()) {
    if (context.budget.remaining <= 0) finish(flow, workLimit(context.budget), undefined, context);
    else walk(flow, context);
  }
}

/**
 * Why a rule's effect cannot be decided where it meets this flow: a connection mark where the
 * packet has no conntrack entry (before conntrack, or untracked), or a chain at conntrack's own
 * priority that reads or sets the state (the order of registration decides).
 */
function connectionUnknown(flow: Flow, rule: Rule, context: Context): string | undefined {
  const hooked = context.hooked[flow.hooked] as HookedChain;
  if (hooked.stage === 'after' && !flow.untracked) return undefined;
  const use = connectionUse(rule);
  if (hooked.stage === 'at' && (use.mark || use.state))
    return `${where(rule.provenance)} runs at conntrack's priority (${CONNTRACK_PRIORITY}) and uses the connection; which runs first is the order of registration, which no dump shows`;
  if (use.mark)
    return `${where(rule.provenance)} uses the connection mark of a packet that has no conntrack entry ${flow.untracked ? `(untracked by ${where(flow.untracked)})` : 'yet (before conntrack)'}`;
  return undefined;
}

/** NOTRACK before conntrack keeps the packet out of it (and of the NAT core); after it, nothing. */
function notrackAction(flow: Flow, at: Provenance, context: Context): Flow {
  const hooked = context.hooked[flow.hooked] as HookedChain;
  if (hooked.stage === 'after' || flow.untracked)
    return withStep(flow, { at, effect: 'matched', note: 'NOTRACK after conntrack: no effect' });
  const region = { ...flow.region, ctstates: UNTRACKED_STATE };
  return withStep(
    { ...flow, untracked: at, region, ctstates: flow.ctstates ?? flow.region.ctstates },
    { at, effect: 'matched', note: 'NOTRACK: the connection is untracked, so no NAT applies to it' },
  );
}

function describeTie(hooked: HookedChain): string {
  return `${hooked.table.name} ${hooked.chain.name} runs at the NAT core's priority (${hooked.priority}); which runs first is the order of registration, which no dump shows`;
}

function workLimit(budget: Budget): Outcome {
  if (budget.expired)
    return {
      kind: 'unknown',
      why: 'the analysis reached its deadline before deciding (the verdict is due by --timeout); the rules are too many or too tangled to decide in time',
    };
  return {
    kind: 'unknown',
    why: `the analysis reached its work limit (${budget.limit} units: rule visits and regions split off); the rules are too many or too tangled to decide`,
  };
}

function finish(flow: Flow, outcome: Outcome, decidedBy: Provenance | undefined, context: Context): undefined {
  // Reported with the states the trace began with: the expectations speak of those.
  const region = flow.ctstates === undefined ? flow.region : { ...flow.region, ctstates: flow.ctstates };
  context.emit({ region, outcome, decidedBy, steps: flow.path, assumed: flow.assumed });
  return undefined;
}

function unknown(flow: Flow, why: string, rule: Provenance | undefined, context: Context): undefined {
  return finish(flow, { kind: 'unknown', why, ...(rule ? { rule } : {}) }, rule, context);
}

function constraintOf(rule: Rule, context: Context): RuleConstraint {
  let cached = context.constraints.get(rule);
  if (!cached) {
    // A rule that only counts, logs or sets a conntrack zone changes nothing, whatever it matches.
    const inert = rule.actions.every((action) => action.kind === 'continue');
    cached = inert ? { kind: 'never' } : ruleConstraint(rule, context.frame, andConstraints);
    // Bounded: a cache of every rule of a 100k-rule table was ~40 MB that lived through the whole
    // analysis. Rules visited again and again (those after a long run of RETURNs) come back at once.
    if (context.constraints.size >= MAX_CACHED_CONSTRAINTS) context.constraints.clear();
    context.constraints.set(rule, cached);
  }
  return cached;
}

/** Walks one flow rule by rule until its base chain ends, queueing the parts each rule splits off. */
function walk(flow: Flow, context: Context): void {
  let current = flow;
  for (;;) {
    const frame = current.frame as Frame;
    const found = nextMatch(current, frame, context);
    if (found === 'stopped') return;
    if (!found) {
      if (frame.parent) {
        current = { ...current, frame: frame.parent };
        continue;
      }
      return endByPolicy(current, context);
    }
    const next = applyActions(found.flow, found.rule, context);
    if (!next) return;
    current = next;
  }
}

/**
 * The next rule of the frame's chain that some packet of the flow meets, and that part of the
 * flow (positioned after the rule); the parts it does not meet are queued. Rules that cannot
 * meet the region are passed by without building anything: that is where time goes.
 */
function nextMatch(flow: Flow, frame: Frame, context: Context): { flow: Flow; rule: Rule } | undefined | 'stopped' {
  const rules = frame.chain.rules;
  const candidates = rulesToVisit(flow, frame, context);
  for (let k = candidates ? firstAtLeast(candidates, frame.next) : 0; ; k++) {
    const index = candidates ? candidates[k] : frame.next + k;
    if (index === undefined || index >= rules.length) break;
    const rule = rules[index] as Rule;
    charge(context.budget, 1);
    if (context.budget.remaining < 0)
      return (
        finish(
          { ...flow, frame: { ...frame, next: index + 1 } },
          workLimit(context.budget),
          rule.provenance,
          context,
        ) ?? 'stopped'
      );
    const constraint = constraintOf(rule, context);
    if (constraint.kind === 'never' || !overlaps(flow.region, constraint.constraint)) continue;
    const undecidable = connectionUnknown(flow, rule, context);
    if (undecidable !== undefined) return unknown(flow, undecidable, rule.provenance, context) ?? 'stopped';
    const matched = split({ ...flow, frame: { ...frame, next: index + 1 } }, rule, constraint, context);
    if (matched === 'stopped') return 'stopped';
    return { flow: matched, rule };
  }
  return undefined;
}

function firstAtLeast(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((sorted[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * A region narrowed to a few destinations visits only the rules the address index names;
 * undefined means every rule from the frame's position on.
 */
function rulesToVisit(flow: Flow, frame: Frame, context: Context): readonly number[] | undefined {
  const rules = frame.chain.rules;
  const daddr = flow.region.daddr;
  if (rules.length - frame.next < 64 || daddr.length === 0 || daddr.length > 4) return undefined;
  // A region spanning more than half of its family's space gains nothing from the index.
  const spanned = (daddr[daddr.length - 1] as Interval)[1] - (daddr[0] as Interval)[0];
  if (spanned > HALF_SPACE[context.frame.family]) return undefined;
  let slot = context.indexes.get(frame.chain);
  if (!slot) {
    slot = {
      index: buildAddressIndex(rules.map((rule) => ruleDestinations(rule, context.frame.family))),
      daddr: undefined,
      all: [],
    };
    context.indexes.set(frame.chain, slot);
  }
  // Rules that test no destination are candidates for every region: when they are most of the
  // chain, listing them for each region would cost more than walking the chain.
  if (slot.index.always.length * 2 > rules.length) return undefined;
  // The regions one rule splits off share their destination list: ask the index once for them.
  if (slot.daddr !== daddr) {
    slot.daddr = daddr;
    slot.all = candidateRules(slot.index, daddr, 0);
  }
  return slot.all;
}

function longestSet(region: Region): number {
  return Math.max(
    region.daddr.length,
    region.saddr.length,
    region.dport.length,
    region.sport.length,
    region.uid.length,
    region.gid.length,
  );
}

/** The part of the flow the rule matches (the rest is queued). */
function split(
  flow: Flow,
  rule: Rule,
  constraint: Extract<RuleConstraint, { kind: 'cube' }>,
  context: Context,
): Flow | 'stopped' {
  const parts = splitRegion(flow.region, constraint.constraint);
  const inside = parts.inside as Region;
  // Splitting copies the region's interval lists: a region that passed many RETURNs of scattered
  // networks carries one interval per RETURN, so the copy is charged by its length. That keeps
  // the bound a bound on time, not only on rule visits.
  const copyCost = 1 + (longestSet(flow.region) >> 5);
  for (const outside of parts.outside) {
    charge(context.budget, copyCost);
    // Pending regions are memory: past the bound they end "unknown" instead of waiting.
    const most = context.budget.maxPending;
    if (context.work.length >= most)
      unknown(
        { ...flow, region: outside },
        `more than ${most} regions wait to be traced; the rules split the packet space too finely to decide`,
        rule.provenance,
        context,
      );
    else context.work.push({ ...flow, region: outside });
  }
  const matched: Flow = { ...flow, region: inside };
  if (constraint.unknown === undefined) return matched;
  const at = rule.provenance;
  if (flow.assumed.length >= MAX_ASSUMPTIONS) {
    unknown(matched, `cannot evaluate "${constraint.unknown}"`, at, context);
    return 'stopped';
  }
  const assumed = [...flow.assumed, at];
  context.work.push(
    withStep({ ...matched, assumed }, { at, effect: 'assumed', note: `assumed not matching: ${constraint.unknown}` }),
  );
  return withStep({ ...matched, assumed }, { at, effect: 'assumed', note: `assumed matching: ${constraint.unknown}` });
}

/** Runs a matched rule's actions; returns the flow to continue with, or undefined when it ended. */
function applyActions(flow: Flow, rule: Rule, context: Context): Flow | undefined {
  let current = flow;
  const at = rule.provenance;
  for (const action of rule.actions) {
    if (action.kind === 'continue') continue;
    if (action.kind === 'notrack') {
      current = notrackAction(current, at, context);
      continue;
    }
    const marked = markAction(current, action, at);
    if (marked && (context.hooked[current.hooked] as HookedChain).tiesNatCore)
      return unknown(
        current,
        `${describeTie(context.hooked[current.hooked] as HookedChain)}; it changes the mark`,
        at,
        context,
      );
    if (marked) {
      current = marked;
      continue;
    }
    if (action.kind === 'jump' || action.kind === 'goto') return enterChain(current, action, at, context);
    if (action.kind === 'return') {
      // One copy per RETURN: every piece a long run of RETURNs makes passes here.
      const path = extended(current.path, { at, effect: 'return' });
      const parent = (current.frame as Frame).parent;
      if (parent) return { ...current, lastReturn: at, path, frame: parent };
      endByPolicy({ ...current, lastReturn: at, path }, context);
      return undefined;
    }
    if (action.kind === 'tproxy') {
      const diverted = tproxyAction(current, action, at, context);
      if (!diverted || action.terminal) return undefined;
      current = diverted;
      continue;
    }
    verdict(current, action, at, context);
    return undefined;
  }
  return current;
}

function markAction(flow: Flow, action: Action, at: Provenance): Flow | undefined {
  const region = flow.region;
  switch (action.kind) {
    case 'set-mark':
      return withStep(
        { ...flow, region: { ...region, mark: rewriteMarks(region.mark, action.value, action.mask) } },
        { at, effect: 'matched', note: 'sets the packet mark' },
      );
    case 'save-mark':
      return withStep(
        { ...flow, region: { ...region, ctmark: region.mark } },
        { at, effect: 'matched', note: 'saves the mark to the connection' },
      );
    case 'restore-mark':
      return withStep(
        { ...flow, region: { ...region, mark: region.ctmark } },
        { at, effect: 'matched', note: 'restores the connection mark' },
      );
    default:
      return undefined;
  }
}

function enterChain(
  flow: Flow,
  action: Extract<Action, { kind: 'jump' | 'goto' }>,
  at: Provenance,
  context: Context,
): Flow | undefined {
  const frame = flow.frame as Frame;
  const target = context.hooked[flow.hooked]?.table.chains.get(action.chain);
  if (!target) return unknown(flow, `${action.kind} to chain ${action.chain}, which does not exist`, at, context);
  const cycle = context.looping.get(target);
  if (cycle !== undefined)
    return unknown(
      flow,
      `${action.kind} to chain ${action.chain} enters a loop (${cycle}); the kernel refuses such a table`,
      at,
      context,
    );
  if (frame.depth >= MAX_DEPTH) return unknown(flow, 'chains nest too deep', at, context);
  const parent = action.kind === 'goto' ? frame.parent : frame;
  return withStep(
    { ...flow, frame: { chain: target, next: 0, parent, depth: frame.depth + 1 } },
    { at, effect: action.kind },
  );
}

function tproxyAction(
  flow: Flow,
  action: Extract<Action, { kind: 'tproxy' }>,
  at: Provenance,
  context: Context,
): Flow | undefined {
  const hooked = context.hooked[flow.hooked] as HookedChain;
  if (context.frame.hook !== 'prerouting' || hooked.chain.base?.hook !== 'prerouting')
    return unknown(flow, 'TPROXY outside PREROUTING', at, context);
  if (flow.untracked)
    return unknown(flow, `TPROXY of a packet untracked by ${where(flow.untracked)} is not modelled`, at, context);
  const diverted = withStep(
    { ...flow, tproxy: { port: action.port, at } },
    { at, effect: action.terminal ? 'verdict' : 'matched', note: `TPROXY to port ${action.port}` },
  );
  if (action.terminal) endChain(diverted, { kind: 'accept', decidedBy: at }, context);
  return diverted;
}

/** ACCEPT, DROP, REDIRECT, DNAT or an action the tracer does not model: the base chain ends. */
function verdict(flow: Flow, action: Action, at: Provenance, context: Context): void {
  const done = withStep(flow, { at, effect: 'verdict' });
  const hooked = context.hooked[flow.hooked] as HookedChain;
  switch (action.kind) {
    case 'accept':
    case 'drop':
      return endChain(done, { kind: action.kind, decidedBy: at }, context);
    case 'redirect':
    case 'dnat': {
      if (hooked.type !== 'nat') return unknown(done, `${action.kind} outside a nat chain`, at, context);
      const outcome: Outcome =
        action.kind === 'redirect'
          ? { kind: 'redirect', port: action.port }
          : { kind: 'dnat', address: action.address, port: action.port };
      return endChain(done, { kind: 'nat', outcome, decidedBy: at }, context);
    }
    case 'unknown':
      return unknown(done, `cannot evaluate "${action.text}"`, at, context);
    default:
      return unknown(done, `unexpected action ${action.kind}`, at, context);
  }
}

type ChainEnd =
  | { readonly kind: 'accept' | 'drop'; readonly decidedBy: Provenance }
  | { readonly kind: 'nat'; readonly outcome: Outcome; readonly decidedBy: Provenance };

function endByPolicy(flow: Flow, context: Context): void {
  const hooked = context.hooked[flow.hooked] as HookedChain;
  const at = policyProvenance(hooked);
  endChain(
    withStep(flow, { at, effect: 'policy' }),
    { kind: hooked.policy, decidedBy: flow.lastReturn ?? at },
    context,
  );
}

/** A base chain ended: record what it decided and go on to the next hooked chain. */
function endChain(flow: Flow, end: ChainEnd, context: Context): void {
  const hooked = context.hooked[flow.hooked] as HookedChain;
  if (end.kind === 'drop') return finish(flow, { kind: 'drop' }, end.decidedBy, context);
  if (end.kind === 'nat') {
    if (flow.groupNat && !sameOutcome(flow.groupNat.outcome, end.outcome)) {
      const why = `tables at the same priority disagree (${where(flow.groupNat.decidedBy)} vs ${where(end.decidedBy)}); the kernel's registration order decides`;
      return unknown(flow, why, end.decidedBy, context);
    }
    return enterNextChain(
      { ...flow, groupNat: flow.groupNat ?? { outcome: end.outcome, decidedBy: end.decidedBy } },
      context,
    );
  }
  return enterNextChain(hooked.type === 'nat' ? { ...flow, lastDecision: end.decidedBy } : flow, context);
}

/**
 * The flow as a chain at this stage sees it: before conntrack every packet's state reads INVALID
 * (no entry yet); after it, the state the trace began with, or UNTRACKED after a NOTRACK.
 */
function atStage(flow: Flow, stage: ConntrackStage): Flow {
  const began = flow.ctstates ?? flow.region.ctstates;
  const seen = stage === 'before' ? INVALID_STATE : flow.untracked ? UNTRACKED_STATE : began;
  if (seen === flow.region.ctstates) return flow;
  return { ...flow, region: { ...flow.region, ctstates: seen }, ctstates: began };
}

/** Starts the next hooked chain that runs for this flow, or finishes the flow after the last. */
function enterNextChain(flow: Flow, context: Context): void {
  let index = flow.hooked + 1;
  let nat = flow.nat;
  let groupNat = flow.groupNat;
  const priority = context.hooked[flow.hooked]?.priority;
  for (; index < context.hooked.length; index++) {
    const next = context.hooked[index] as HookedChain;
    if (next.priority !== priority && groupNat) {
      nat = groupNat;
      groupNat = undefined;
    }
    // An untracked packet never reaches the NAT core: no nat chain runs for it.
    if (!(next.type === 'nat' && (nat || flow.untracked))) break;
  }
  if (index >= context.hooked.length) {
    const bound = nat ?? groupNat;
    if (flow.tproxy) return finish(flow, { kind: 'tproxy', port: flow.tproxy.port }, flow.tproxy.at, context);
    if (bound) return finish(flow, bound.outcome, bound.decidedBy, context);
    return finish(flow, { kind: 'accept' }, flow.untracked ?? flow.lastDecision, context);
  }
  const hooked = context.hooked[index] as HookedChain;
  const chain = hooked.chain;
  context.work.push({
    ...atStage(flow, hooked.stage),
    hooked: index,
    nat,
    groupNat,
    lastReturn: undefined,
    frame: { chain, next: 0, parent: undefined, depth: 0 },
  });
}
