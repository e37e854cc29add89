import type { ExpectationAnswer } from '../expect/space-check.js';
import { countExpectations, expectationsText } from '../expect/count.js';
import { describeExpected } from '../expect/expected.js';
import { describeRule, type Finding } from '../expect/finding.js';
import { describeRegion, regionJson } from '../expect/region-text.js';
import { describeOutcome, type TraceStep } from '../trace/outcome.js';
import type { Analysis } from './analyze.js';

/** JSON-safe views of the analysis: addresses as text, no bigint, no Maps. */
export interface ReportStep {
  readonly backend: string;
  readonly table: string;
  readonly chain: string;
  readonly position: number;
  readonly effect: string;
  readonly text: string;
  readonly note?: string;
}

/** A region as data: one list of terms per field (CIDRs, port and id ranges, interfaces, marks). */
export type ReportRegion = Readonly<Record<string, readonly string[]>>;

export interface ReportExpectation {
  readonly id: string;
  readonly family: string;
  readonly hook: string;
  readonly because: string;
  /** `anything` where the configuration does not speak (listed so nothing is silently left out). */
  readonly expected: string;
  readonly holds: boolean;
  readonly regions: readonly ReportRegion[];
  readonly outcomes: ReadonlyArray<{ readonly actual: string; readonly decidedBy?: string }>;
}

export interface ReportFinding {
  readonly reason: string;
  readonly expectation: string;
  readonly message: string;
  /** The first (largest merged) region at fault, and all of them. */
  readonly region: ReportRegion;
  readonly regions: readonly ReportRegion[];
  readonly regionText: readonly string[];
  /** Regions at fault past those listed (only present when some were left out). */
  readonly unlistedRegions?: number;
  readonly expected: string;
  readonly actual: string;
  readonly decidedBy?: string;
  readonly path: readonly ReportStep[];
}

export interface RulesReport {
  readonly status: 'passed' | 'failed' | 'unknown';
  readonly families: readonly string[];
  /** Families the analysis did not ask about (no rules for them in the dumps, or not asked for). */
  readonly notChecked: readonly string[];
  readonly backendsWithRules: readonly string[];
  readonly splitAcrossBackends: boolean;
  readonly notes: readonly string[];
  readonly findings: readonly ReportFinding[];
  /** Findings counted but not listed (only present when some were left out). */
  readonly omittedFindings?: number;
  readonly expectations: readonly ReportExpectation[];
}

/** Regions an expectation lists in a report; the rest are counted in `outcomes` only. */
const MAX_REPORTED_REGIONS = 32;

function stepJson(step: TraceStep): ReportStep {
  return {
    backend: step.at.backend,
    table: step.at.table,
    chain: step.at.chain,
    position: step.at.position,
    effect: step.effect,
    text: step.at.text,
    ...(step.note ? { note: step.note } : {}),
  };
}

function expectationJson(answer: ExpectationAnswer): ReportExpectation {
  const { expectation, scope } = answer;
  return {
    id: expectation.id,
    family: expectation.family,
    hook: expectation.hook,
    because: expectation.because,
    expected: expectation.expected ? describeExpected(expectation.expected) : 'anything',
    holds: answer.holds,
    regions: expectation.regions.slice(0, MAX_REPORTED_REGIONS).map((region) => regionJson(region, scope)),
    outcomes: answer.outcomes.map((seen) => ({
      actual: describeOutcome(seen.outcome),
      ...(seen.decidedBy ? { decidedBy: describeRule(seen.decidedBy) } : {}),
    })),
  };
}

function findingJson(finding: Finding): ReportFinding {
  const regions = finding.regions.map((region) => regionJson(region, finding.scope));
  return {
    reason: finding.reason,
    expectation: finding.expectation.id,
    message: finding.message,
    region: regions[0] ?? {},
    regions,
    regionText: finding.regions.map((region) => describeRegion(region, finding.scope)),
    ...(finding.unlistedRegions > 0 ? { unlistedRegions: finding.unlistedRegions } : {}),
    expected: finding.expectation.expected ? describeExpected(finding.expectation.expected) : 'anything',
    actual: describeOutcome(finding.actual),
    ...(finding.decidedBy ? { decidedBy: describeRule(finding.decidedBy) } : {}),
    path: finding.path.map(stepJson),
  };
}

export function reportOf(analysis: Extract<Analysis, { kind: 'checked' }>): RulesReport {
  return {
    status: analysis.check.status,
    families: analysis.families,
    notChecked: (['ipv4', 'ipv6'] as const).filter((family) => !analysis.families.includes(family)),
    backendsWithRules: analysis.merged.backendsWithRules,
    splitAcrossBackends: analysis.merged.splitAcrossBackends,
    notes: analysis.merged.notes,
    findings: analysis.check.findings.map(findingJson),
    ...(analysis.check.omittedFindings > 0 ? { omittedFindings: analysis.check.omittedFindings } : {}),
    expectations: analysis.check.answers.map(expectationJson),
  };
}

function reportStepLine(step: ReportStep): string {
  const where =
    step.position > 0 ? `${step.table} ${step.chain} #${step.position}` : `${step.table} ${step.chain} policy`;
  return `${step.backend} ${where} [${step.effect}${step.note ? `: ${step.note}` : ''}] ${step.text}`;
}

const FAMILY_NAME: Readonly<Record<string, string>> = { ipv4: 'IPv4', ipv6: 'IPv6' };

/**
 * Which families were checked and, as loudly, which were not: explain cannot see the pod's
 * addresses, so a family with no rules in the dumps is left out under --family auto, where
 * validate, which sees a dual-stack pod's IPv6 address, fails it.
 */
function familiesLine(report: RulesReport): string {
  const names = (families: readonly string[]): string => families.map((f) => FAMILY_NAME[f] ?? f).join(', ');
  const checked = `families checked: ${names(report.families)}`;
  if (report.notChecked.length === 0) return checked;
  const missing = names(report.notChecked);
  return `${checked}; not checked: ${missing}, no dump holds ${missing} rules; validate fails a pod that has ${missing} and no rules for it: run with --family dual to check it the same way`;
}

/** The report as text: the headline, what is wrong (with each deciding path), every expectation. */
export function reportText(report: RulesReport, configuration: string): string {
  const count = countExpectations(
    report.expectations.map((e) => ({ constrained: e.expected !== 'anything', holds: e.holds })),
  );
  const of = expectationsText(count.failing, count);
  const headline =
    report.status === 'passed'
      ? `PASSED: every packet goes where the configuration expects: ${expectationsText(count.checked, count)} hold`
      : report.status === 'failed'
        ? `FAILED: ${of} do not hold`
        : `UNKNOWN: ${of} cannot be decided from these rules (not a pass)`;
  const lines = [
    `interlock explain: ${headline}`,
    `configuration: ${configuration}`,
    familiesLine(report),
    `backends with rules: ${report.backendsWithRules.join(', ') || 'none'}`,
  ];
  for (const note of report.notes) lines.push(`note: ${note}`);
  if (report.findings.length > 0) lines.push('', 'What is wrong:');
  for (const finding of report.findings) {
    lines.push(`  - ${finding.message}`);
    for (const step of finding.path) lines.push(`      ${reportStepLine(step)}`);
  }
  if (report.omittedFindings)
    lines.push(`  - and ${report.omittedFindings} more finding(s) of the same kinds, not listed`);
  lines.push('', 'Expectations:');
  for (const e of report.expectations) {
    const mark = e.expected === 'anything' ? '--  ' : e.holds ? 'ok  ' : 'FAIL';
    lines.push(
      `  ${mark} ${e.id}: ${e.because}; expected ${e.expected}; got ${e.outcomes.map((o) => o.actual).join(' / ') || 'nothing'}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
