import type { Provenance } from '../rules/model.js';
import { pathOf } from '../trace/flow.js';
import { describeOutcome, type Outcome } from '../trace/outcome.js';
import { coalesce, intersect, narrowing, overlaps, subtract, type Constraint, type Region } from '../trace/region.js';
import type { Piece } from '../trace/trace-region.js';
import type { Expectation } from './expectation.js';
import type { Expected } from './expected.js';
import { findingMessage, type Finding, type FindingReason } from './finding.js';
import type { RegionScope } from './region-text.js';
import { portList } from './spec-sets.js';

/** One family and hook: where every packet went, and what the configuration wanted. */
export interface TracedSpace {
  readonly scope: RegionScope;
  readonly pieces: readonly Piece[];
  readonly expectations: readonly Expectation[];
  /** The region the trace started from (pieces may carry marks the rules rewrote). */
  readonly space: Region;
}

export interface OutcomeSeen {
  readonly outcome: Outcome;
  readonly decidedBy: Provenance | undefined;
}

export interface ExpectationAnswer {
  readonly expectation: Expectation;
  readonly scope: RegionScope;
  readonly holds: boolean;
  /** Every distinct outcome some packet of the expectation's regions gets. */
  readonly outcomes: readonly OutcomeSeen[];
}

export interface SpaceCheckResult {
  readonly status: 'passed' | 'failed' | 'unknown';
  readonly answers: readonly ExpectationAnswer[];
  /** Mismatches first (a definite mismatch outranks an unknown), in expectation order. */
  readonly findings: readonly Finding[];
  /** Findings past the number kept in full (a hostile table makes one per rule), counted up to 10,000; never 0 when any was dropped. */
  readonly omittedFindings: number;
}

/**
 * Regions a finding keeps: merging is quadratic. The kept ones are merged each time they reach
 * this many, so pieces of one region cost nothing; only when merging leaves more than half of
 * them are later pieces counted instead of kept, and the finding says how many.
 */
const MAX_REGIONS_KEPT = 64;
/**
 * Findings kept in full per reason, and distinct outcomes listed per expectation. A hostile table
 * of 100k RETURNs would otherwise make 100k findings, each with its path and sentence; the rest are
 * counted (the status never depends on what was kept).
 */
const MAX_FINDINGS = 256;
const MAX_OUTCOMES_SEEN = 32;
/** Omitted findings are counted exactly up to this many (their keys are memory too). */
const MAX_OMITTED_COUNTED = 10_000;

function meets(outcome: Outcome, expected: Expected): boolean {
  switch (expected.kind) {
    case 'redirect':
      return outcome.kind === 'redirect' && outcome.port === expected.port;
    case 'tproxy':
      return outcome.kind === 'tproxy' && outcome.port === expected.port;
    case 'redirect-any':
      return outcome.kind === 'redirect' && outcome.port !== undefined && expected.ports.includes(outcome.port);
    case 'not-redirected':
      return outcome.kind === 'accept';
    case 'redirect-or-not':
      return outcome.kind === 'accept' || (outcome.kind === 'redirect' && outcome.port === expected.port);
    case 'dropped':
      return outcome.kind === 'drop';
    case 'not-looped':
      return outcome.kind === 'accept' || (outcome.kind === 'redirect' && outcome.port === expected.inboundPort);
  }
}

/** The part of `region` whose outcome is not the expected one. */
function violating(region: Region, outcome: Outcome, expected: Expected): Region[] {
  if (meets(outcome, expected)) return [];
  // REDIRECT without a port keeps each packet's own port: right exactly where that is the port.
  if (
    (expected.kind === 'redirect' || expected.kind === 'redirect-or-not') &&
    outcome.kind === 'redirect' &&
    outcome.port === undefined
  )
    return subtract(region, { dport: portList([expected.port]) });
  if (expected.kind === 'redirect-any' && outcome.kind === 'redirect' && outcome.port === undefined)
    return subtract(region, { dport: portList(expected.ports) });
  return [region];
}

interface Group {
  readonly reason: FindingReason;
  readonly expectation: Expectation;
  readonly scope: RegionScope;
  readonly piece: Piece;
  regions: Region[];
  /** Pieces at fault past the kept regions, counted: the finding says it names only part. */
  unlisted: number;
  /** The kept regions no longer merge below half the limit: later pieces are only counted. */
  saturated: boolean;
}

function groupKey(reason: FindingReason, expectation: Expectation, piece: Piece): string {
  const at = piece.decidedBy;
  return [
    reason,
    expectation.id,
    describeOutcome(piece.outcome),
    at ? `${at.backend}/${at.family}/${at.table}/${at.chain}/${at.position}` : '-',
    piece.assumed.map((a) => a.text).join('|'),
  ].join('\n');
}

/** Everything the check remembers while pieces stream past; its size is bounded whatever the rules. */
interface Tally {
  readonly groups: Map<string, Group>;
  readonly seen: Map<Expectation, OutcomeSeen[]>;
  /** Findings beyond MAX_FINDINGS, by reason: counted, not kept. */
  readonly omitted: Map<FindingReason, Set<string>>;
  /** Expectations some packet violates, kept or omitted. */
  readonly failing: Set<Expectation>;
}

function tallyOf(): Tally {
  return { groups: new Map(), seen: new Map(), omitted: new Map(), failing: new Set() };
}

function noteOutcome(tally: Tally, expectation: Expectation, piece: Piece): void {
  const outcomes = tally.seen.get(expectation) ?? [];
  tally.seen.set(expectation, outcomes);
  if (outcomes.length >= MAX_OUTCOMES_SEEN) return;
  const text = describeOutcome(piece.outcome);
  if (!outcomes.some((o) => o.decidedBy === piece.decidedBy && describeOutcome(o.outcome) === text))
    outcomes.push({ outcome: piece.outcome, decidedBy: piece.decidedBy });
}

function groupsOf(tally: Tally, reason: FindingReason): number {
  let count = 0;
  for (const group of tally.groups.values()) if (group.reason === reason) count++;
  return count;
}

function addWrong(
  tally: Tally,
  space: Pick<TracedSpace, 'scope'>,
  expectation: Expectation,
  piece: Piece,
  wrong: readonly Region[],
): void {
  const reason: FindingReason =
    piece.outcome.kind === 'unknown' || piece.assumed.length > 0 ? 'RulesUnknownMatch' : 'RulesMismatch';
  const key = groupKey(reason, expectation, piece);
  tally.failing.add(expectation);
  let group = tally.groups.get(key);
  if (!group) {
    const omitted = tally.omitted.get(reason) ?? new Set<string>();
    if (omitted.size > 0 || groupsOf(tally, reason) >= MAX_FINDINGS) {
      if (omitted.size < MAX_OMITTED_COUNTED) omitted.add(key);
      tally.omitted.set(reason, omitted);
      return;
    }
    group = { reason, expectation, scope: space.scope, piece, regions: [], unlisted: 0, saturated: false };
    tally.groups.set(key, group);
  }
  for (const region of wrong) keepRegion(group, region);
}

function keepRegion(group: Group, region: Region): void {
  if (group.regions.length >= MAX_REGIONS_KEPT && !group.saturated) {
    group.regions = coalesce(group.regions);
    group.saturated = group.regions.length > MAX_REGIONS_KEPT / 2;
  }
  if (group.regions.length < MAX_REGIONS_KEPT) group.regions.push(region);
  else group.unlisted++;
}

/** An expectation's regions as constraints on the fields they narrow (see SpaceChecker.space). */
interface Compiled {
  readonly expectation: Expectation;
  readonly constraints: readonly Constraint[];
}

/** Compares one piece with every expectation region it overlaps. */
function comparePiece(
  tally: Tally,
  space: Pick<TracedSpace, 'scope'>,
  compiled: readonly Compiled[],
  piece: Piece,
): void {
  for (const { expectation, constraints } of compiled) {
    // Most pieces meet one expectation and get what it expects: intersections are built only
    // for a piece whose outcome is wrong, to name the packets at fault.
    if (!constraints.some((region) => overlaps(piece.region, region))) continue;
    noteOutcome(tally, expectation, piece);
    const expected = expectation.expected;
    if (!expected || meets(piece.outcome, expected)) continue;
    const wrong: Region[] = [];
    for (const region of constraints) {
      const inside = intersect(piece.region, region);
      if (inside) wrong.push(...violating(inside, piece.outcome, expected));
    }
    if (wrong.length > 0) addWrong(tally, space, expectation, piece, wrong);
  }
}

function findingOf(group: Group): Finding {
  const { piece } = group;
  const base = {
    reason: group.reason,
    expectation: group.expectation,
    scope: group.scope,
    regions: coalesce(group.regions),
    unlistedRegions: group.unlisted,
    actual: piece.outcome,
    decidedBy: piece.decidedBy,
    assumed: piece.assumed,
    path: pathOf(piece.steps),
  };
  return { ...base, message: findingMessage(base) };
}

/**
 * Checks pieces as the tracer makes them, one family and hook after another, holding only what a
 * report needs: the analysis's memory does not grow with the number of pieces.
 */
export class SpaceChecker {
  private readonly tally = tallyOf();
  private readonly spaces: Array<Pick<TracedSpace, 'scope' | 'expectations'>> = [];

  /**
   * The next family and hook; returns what takes its pieces. Given the space the trace started
   * from, expectation regions are tested only on the fields where they are narrower than it: the
   * tracer's rewrites of marks then cannot move a piece out of every expectation, and most tests
   * touch one or two fields instead of eleven.
   */
  space(scope: RegionScope, expectations: readonly Expectation[], traced: Region): (piece: Piece) => void {
    const space = { scope, expectations };
    this.spaces.push(space);
    const compiled = expectations.map((expectation) => ({
      expectation,
      constraints: expectation.regions.map((region) => narrowing(region, traced)),
    }));
    return (piece) => comparePiece(this.tally, space, compiled, piece);
  }

  result(): SpaceCheckResult {
    return resultOf(this.tally, this.spaces);
  }
}

function resultOf(tally: Tally, spaces: ReadonlyArray<Pick<TracedSpace, 'scope' | 'expectations'>>): SpaceCheckResult {
  const findings = [...tally.groups.values()].map(findingOf);
  const mismatches = findings.filter((finding) => finding.reason === 'RulesMismatch');
  const unknowns = findings.filter((finding) => finding.reason !== 'RulesMismatch');
  const failing = tally.failing;
  const answers = spaces.flatMap((space) =>
    space.expectations.map((expectation) => ({
      expectation,
      scope: space.scope,
      holds: !failing.has(expectation),
      outcomes: tally.seen.get(expectation) ?? [],
    })),
  );
  const checked = answers.filter((answer) => answer.expectation.expected !== undefined).length;
  const omitted = (tally.omitted.get('RulesMismatch')?.size ?? 0) + (tally.omitted.get('RulesUnknownMatch')?.size ?? 0);
  // The status counts omitted findings too: what was not kept still fails the check.
  const status =
    checked === 0
      ? 'unknown'
      : mismatches.length > 0 || tally.omitted.has('RulesMismatch')
        ? 'failed'
        : unknowns.length > 0
          ? 'unknown'
          : 'passed';
  return { status, answers, findings: [...mismatches, ...unknowns], omittedFindings: omitted };
}
