import { formatCidr } from '../addr/cidr.js';
import { formatPortSet } from '../addr/port-set.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { ExpectationAnswer } from '../expect/check.js';
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

/** The configuration in one line, for reports: what the expectations were derived from. */
export function specSummary(spec: InterceptionSpec): string {
  const cidrs =
    spec.includeOutboundCidrs.kind === 'all' ? '*' : spec.includeOutboundCidrs.cidrs.map(formatCidr).join(',');
  return [
    `mesh=${spec.mesh}`,
    `inbound=${spec.inboundPort}${spec.tproxy ? '(tproxy)' : ''}`,
    `outbound=${spec.outboundPort}`,
    `proxy-uid=${spec.proxyUids.join(',')}`,
    `proxy-gid=${spec.proxyGids.join(',')}`,
    `include-inbound-ports=${formatPortSet(spec.includeInboundPorts)}`,
    `exclude-inbound-ports=${formatPortSet(spec.excludeInboundPorts)}`,
    `include-outbound-cidrs=${cidrs}`,
    `exclude-outbound-cidrs=${spec.excludeOutboundCidrs.map(formatCidr).join(',')}`,
    `exclude-outbound-ports=${formatPortSet(spec.excludeOutboundPorts)}`,
  ].join(' ');
}

/** The report as text: the headline, what is wrong (with each deciding path), every expectation. */
export function reportText(report: RulesReport, configuration: string): string {
  const checked = report.expectations.filter((e) => e.expected !== 'anything');
  const failing = checked.filter((e) => !e.holds).length;
  const headline =
    report.status === 'passed'
      ? `PASSED: all ${checked.length} expectations hold for every packet`
      : report.status === 'failed'
        ? `FAILED: ${failing} of ${checked.length} expectations do not hold`
        : `UNKNOWN: ${failing} of ${checked.length} expectations cannot be decided from these rules (not a pass)`;
  const lines = [
    `interlock explain: ${headline}`,
    `configuration: ${configuration}`,
    `families: ${report.families.join(', ')}; backends with rules: ${report.backendsWithRules.join(', ') || 'none'}`,
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
