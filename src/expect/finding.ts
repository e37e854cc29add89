import type { Provenance } from '../rules/model.js';
import { describeOutcome, type Outcome, type TraceStep } from '../trace/outcome.js';
import type { Region } from '../trace/region.js';
import type { Expectation } from './expectation.js';
import { describeExpected } from './expected.js';
import { describeRegion, type RegionScope } from './region-text.js';

/**
 * Stable reason codes. `RulesMismatch`: a region of packets ends up somewhere the configuration
 * forbids. `RulesUnknownMatch`: the answer depends on a rule the tracer cannot evaluate (never a pass).
 */
export type FindingReason = 'RulesMismatch' | 'RulesUnknownMatch';

export interface Finding {
  readonly reason: FindingReason;
  readonly expectation: Expectation;
  readonly scope: RegionScope;
  /** The packets at fault, merged into the fewest regions. */
  readonly regions: readonly Region[];
  /** Regions at fault not in `regions` (past the number a finding keeps); 0 when it names them all. */
  readonly unlistedRegions: number;
  readonly actual: Outcome;
  readonly decidedBy: Provenance | undefined;
  readonly assumed: readonly Provenance[];
  readonly path: readonly TraceStep[];
  /** One sentence: the region, the rule that decided it, what was expected instead. */
  readonly message: string;
}

export function describeRule(at: Provenance | undefined): string {
  if (!at) return 'no rule (no chain is hooked there)';
  const family = at.family === 'ipv4' ? 'ip' : at.family === 'ipv6' ? 'ip6' : 'inet';
  const place =
    at.position > 0 ? `rule ${at.position} of ${at.table} ${at.chain}` : `the policy of ${at.table} ${at.chain}`;
  return `${place} (${at.backend}, ${family}): \`${at.text}\``;
}

/** Regions beyond this many are summarised by a count: a sentence must stay readable. */
const MAX_REGIONS_NAMED = 3;

function regionsText(finding: Pick<Finding, 'regions' | 'scope' | 'unlistedRegions'>): string {
  const named = finding.regions.slice(0, MAX_REGIONS_NAMED).map((region) => describeRegion(region, finding.scope));
  const more = finding.regions.length - named.length + finding.unlistedRegions;
  // Unlisted regions were never merged: some may join each other or a listed one.
  const bound = finding.unlistedRegions > 0 ? 'up to ' : '';
  return `${named.join('; and ')}${more > 0 ? `; and ${bound}${more} more region(s)` : ''}`;
}

export function findingMessage(finding: Omit<Finding, 'message'>): string {
  const { expectation, actual } = finding;
  const expected = expectation.expected ? describeExpected(expectation.expected) : 'anything';
  if (finding.reason === 'RulesUnknownMatch') {
    const why =
      actual.kind === 'unknown'
        ? actual.why
        : `it is ${describeOutcome(actual)} only if ${finding.assumed.map((at) => `\`${at.text}\``).join(' and ')} match(es) as assumed`;
    const rule = actual.kind === 'unknown' ? (actual.rule ?? finding.decidedBy) : finding.assumed[0];
    // An unknown without a rule (the work limit) was not decided by a missing chain: name none.
    const at = rule ? `, at ${describeRule(rule)}` : '';
    return `${regionsText(finding)}: cannot tell where it ends up, ${why}${at}; expected ${expected} (${expectation.because})`;
  }
  return `${regionsText(finding)}, is ${describeOutcome(actual)} (${describeRule(finding.decidedBy)}); expected ${expected} because ${expectation.because}`;
}
