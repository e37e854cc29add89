import type { Family } from '../addr/ip.js';

/** The rules check's answer, in plain data. Types and one helper only: cheap to load. */
export interface RulesInspection {
  readonly status: 'passed' | 'failed' | 'unknown' | 'not-inspected' | 'unreadable';
  /** Stable CamelCase: RulesMismatch, RulesUnknownMatch, RulesUnreadable, RulesNotInspected, RulesUnparseable. */
  readonly reason?: string;
  readonly message: string;
  readonly evidence: readonly string[];
  readonly report: unknown;
}

export interface InspectOptions {
  readonly families: readonly Family[];
  readonly mode: 'auto' | 'required';
  readonly timeoutMs: number;
  /** Set by the inspection from timeoutMs: when the analysis must have answered (performance.now()). */
  readonly analysisDeadline?: number;
}

/** The rules could not be looked at: `auto` leaves the verdict to the probe, `required` fails. */
export function cannotRead(
  mode: InspectOptions['mode'],
  why: string,
  report: unknown,
  evidence: readonly string[] = [why],
): RulesInspection {
  if (mode === 'auto') {
    return {
      status: 'not-inspected',
      reason: 'RulesNotInspected',
      message: `the rules were not inspected (${why}); the probe alone decided`,
      evidence,
      report,
    };
  }
  return {
    status: 'unreadable',
    reason: 'RulesUnreadable',
    message: `the rules are required but cannot be read: ${why}`,
    evidence,
    report,
  };
}
