import { formatCidr } from '../addr/cidr.js';
import { formatIp } from '../addr/ip.js';
import { formatPortSet } from '../addr/port-set.js';
import type { InterceptionSpec } from '../config/interception.js';
import { describeExpected, describeRule } from '../expect/finding.js';
import type { Packet } from '../trace/packet.js';
import { describeOutcome, type Outcome, type TraceStep } from '../trace/outcome.js';
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

export interface ReportQuestion {
  readonly id: string;
  readonly description: string;
  readonly because: string;
  readonly packet: Record<string, string | number | undefined>;
  readonly expected: string;
  readonly actual: string;
  readonly holds: boolean;
  readonly reason?: string;
  readonly decidedBy?: string;
  readonly path: readonly ReportStep[];
}

export interface RulesReport {
  readonly status: 'passed' | 'failed' | 'unknown';
  readonly families: readonly string[];
  readonly backendsWithRules: readonly string[];
  readonly splitAcrossBackends: boolean;
  readonly notes: readonly string[];
  readonly questions: readonly ReportQuestion[];
}

export function packetJson(packet: Packet): Record<string, string | number | undefined> {
  return {
    family: packet.family,
    hook: packet.hook,
    protocol: packet.protocol,
    source: formatIp(packet.source),
    destination: formatIp(packet.destination),
    destinationPort: packet.destinationPort,
    uid: packet.uid,
    gid: packet.gid,
    inInterface: packet.inInterface,
    outInterface: packet.outInterface,
    ctState: packet.ctState,
  };
}

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

export function reportOf(analysis: Extract<Analysis, { kind: 'checked' }>): RulesReport {
  return {
    status: analysis.check.status,
    families: analysis.families,
    backendsWithRules: analysis.merged.backendsWithRules,
    splitAcrossBackends: analysis.merged.splitAcrossBackends,
    notes: analysis.merged.notes,
    questions: analysis.check.answers.map((answer) => ({
      id: answer.question.id,
      description: answer.question.description,
      because: answer.question.because,
      packet: packetJson(answer.question.packet),
      expected: describeExpected(answer.question.expected),
      actual: describeOutcome(answer.trace.outcome),
      holds: answer.holds,
      ...(answer.finding ? { reason: answer.finding.reason } : {}),
      ...(answer.trace.decidedBy ? { decidedBy: describeRule(answer.trace.decidedBy) } : {}),
      path: answer.trace.path.map(stepJson),
    })),
  };
}

export function reportStepLine(step: ReportStep): string {
  const where = step.position > 0 ? `${step.table} ${step.chain} #${step.position}` : `${step.table} ${step.chain} policy`;
  return `${step.backend} ${where} [${step.effect}${step.note ? `: ${step.note}` : ''}] ${step.text}`;
}

export function outcomeText(outcome: Outcome): string {
  return describeOutcome(outcome);
}

/** The configuration in one line, for reports: what the questions were derived from. */
export function specSummary(spec: InterceptionSpec): string {
  const cidrs = spec.includeOutboundCidrs.kind === 'all' ? '*' : spec.includeOutboundCidrs.cidrs.map(formatCidr).join(',');
  return [
    `mesh=${spec.mesh}`,
    `inbound=${spec.inboundPort}${spec.tproxy ? '(tproxy)' : ''}`,
    `outbound=${spec.outboundPort}`,
    `proxy-uid=${spec.proxyUids.join(',')}`,
    `proxy-gid=${spec.proxyGids.join(',')}`,
    `include-inbound-ports=${formatPortSet(spec.includeInboundPorts)}`,
    `exclude-inbound-ports=${formatPortSet(spec.excludeInboundPorts)}`,
    `include-outbound-cidrs=${cidrs}`,
    `exclude-outbound-ports=${formatPortSet(spec.excludeOutboundPorts)}`,
  ].join(' ');
}
