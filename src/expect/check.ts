import type { Provenance } from '../rules/model.js';
import { pathOf } from '../trace/flow.js';
import { describeOutcome, type Outcome } from '../trace/outcome.js';
import { coalesce, intersect, subtract, type Region } from '../trace/region.js';
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

export interface CheckResult {
  readonly status: 'passed' | 'failed' | 'unknown';
  readonly answers: readonly ExpectationAnswer[];
  /** Mismatches first (a definite mismatch outranks an unknown), in expectation order. */
  readonly findings: readonly Finding[];
}

/** Regions a finding keeps before merging: merging is quadratic, and a report needs few. */
const MAX_REGIONS_KEPT = 64;

function meets(outcome: Outcome, expected: Expected): boolean {
  switch (expected.kind) {
    case 'redirect':
      return outcome.kind === 'redirect' && outcome.port === expected.port;
    case 'tproxy':
      return outcome.kind === 'tproxy' && outcome.port === expected.port;
    case 'not-redirected':
      return outcome.kind === 'accept';
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
  if (expected.kind === 'redirect' && outcome.kind === 'redirect' && outcome.port === undefined) return subtract(region, { dport: portList([expected.port]) });
  return [region];
}

interface Group {
  readonly reason: FindingReason;
  readonly expectation: Expectation;
  readonly scope: RegionScope;
  readonly piece: Piece;
  readonly regions: Region[];
}

function groupKey(reason: FindingReason, expectation: Expectation, piece: Piece): string {
  const at = piece.decidedBy;
  return [reason, expectation.id, describeOutcome(piece.outcome), at ? `${at.backend}/${at.family}/${at.table}/${at.chain}/${at.position}` : '-', piece.assumed.map((a) => a.text).join('|')].join('\n');
}

/** Compares every piece with every expectation region it overlaps. */
function compare(space: TracedSpace, groups: Map<string, Group>, seen: Map<Expectation, OutcomeSeen[]>): void {
  for (const piece of space.pieces) {
    for (const expectation of space.expectations) {
      const overlapping = expectation.regions.flatMap((region) => intersect(piece.region, region) ?? []);
      if (overlapping.length === 0) continue;
      const outcomes = seen.get(expectation) ?? [];
      if (!outcomes.some((o) => describeOutcome(o.outcome) === describeOutcome(piece.outcome) && o.decidedBy === piece.decidedBy)) outcomes.push({ outcome: piece.outcome, decidedBy: piece.decidedBy });
      seen.set(expectation, outcomes);
      if (!expectation.expected) continue;
      const expected = expectation.expected;
      const wrong = overlapping.flatMap((region) => violating(region, piece.outcome, expected));
      if (wrong.length === 0) continue;
      const reason: FindingReason = piece.outcome.kind === 'unknown' || piece.assumed.length > 0 ? 'RulesUnknownMatch' : 'RulesMismatch';
      const key = groupKey(reason, expectation, piece);
      const group = groups.get(key) ?? { reason, expectation, scope: space.scope, piece, regions: [] };
      group.regions.push(...wrong.slice(0, Math.max(0, MAX_REGIONS_KEPT - group.regions.length)));
      groups.set(key, group);
    }
  }
}

function findingOf(group: Group): Finding {
  const { piece } = group;
  const base = {
    reason: group.reason,
    expectation: group.expectation,
    scope: group.scope,
    regions: coalesce(group.regions),
    actual: piece.outcome,
    decidedBy: piece.decidedBy,
    assumed: piece.assumed,
    path: pathOf(piece.steps),
  };
  return { ...base, message: findingMessage(base) };
}

/** Checks every traced space against its expectations. Pure; no expectation at all is not a pass. */
export function checkSpaces(spaces: readonly TracedSpace[]): CheckResult {
  const groups = new Map<string, Group>();
  const seen = new Map<Expectation, OutcomeSeen[]>();
  for (const space of spaces) compare(space, groups, seen);
  const findings = [...groups.values()].map(findingOf);
  const mismatches = findings.filter((finding) => finding.reason === 'RulesMismatch');
  const unknowns = findings.filter((finding) => finding.reason !== 'RulesMismatch');
  const failing = new Set(findings.map((finding) => finding.expectation));
  const answers = spaces.flatMap((space) =>
    space.expectations.map((expectation) => ({ expectation, scope: space.scope, holds: !failing.has(expectation), outcomes: seen.get(expectation) ?? [] })),
  );
  const checked = answers.filter((answer) => answer.expectation.expected !== undefined).length;
  const status = checked === 0 ? 'unknown' : mismatches.length > 0 ? 'failed' : unknowns.length > 0 ? 'unknown' : 'passed';
  return { status, answers, findings: [...mismatches, ...unknowns] };
}
