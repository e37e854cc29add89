import type { Check } from './check.js';

export type VerdictOutcome = 'pass' | 'fail' | 'config' | 'internal' | 'interrupted';

export interface Verdict {
  readonly outcome: VerdictOutcome;
  readonly reason: string;
  readonly message: string;
  readonly evidence: readonly string[];
  readonly checks: readonly Check[];
}

/**
 * Fail closed: the only pass is one where every required check ran and passed and at least one
 * probe proved interception. Anything else, including a check that never ran, is a failure.
 */
export function decideVerdict(checks: readonly Check[], interruptedBy?: string): Verdict {
  if (interruptedBy !== undefined) {
    return {
      outcome: 'interrupted',
      reason: 'Interrupted',
      message: `validation was interrupted by ${interruptedBy} before interception was proven`,
      evidence: evidenceOf(checks),
      checks,
    };
  }
  const failures = checks
    .filter((check) => check.status === 'failed')
    .sort((a, b) => (a.precedence ?? 50) - (b.precedence ?? 50));
  const first = failures[0];
  if (first) {
    return {
      outcome: first.failureClass === 'configuration' ? 'config' : first.failureClass === 'internal' ? 'internal' : 'fail',
      reason: first.reason ?? 'ValidationFailed',
      message: first.message,
      evidence: [...first.evidence, ...evidenceOf(checks.filter((check) => check !== first))],
      checks,
    };
  }
  const missing = checks.find((check) => check.required && check.status !== 'passed');
  const proven = checks.some((check) => check.name.startsWith('probe-') && check.status === 'passed');
  if (missing || !proven) {
    return {
      outcome: 'fail',
      reason: 'NotProven',
      message: missing
        ? `required check ${missing.name} did not pass (${missing.status}): ${missing.message}`
        : 'no probe proved interception',
      evidence: evidenceOf(checks),
      checks,
    };
  }
  const summary = checks.filter((check) => check.name.startsWith('probe-')).map((check) => check.message).join('; ');
  return { outcome: 'pass', reason: 'Intercepted', message: summary, evidence: evidenceOf(checks), checks };
}

function evidenceOf(checks: readonly Check[]): string[] {
  return checks.map((check) => `${check.name}: ${check.status}${check.reason && check.status !== 'passed' ? ` (${check.reason})` : ''} - ${check.message}`);
}
