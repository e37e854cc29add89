import type { Proof } from '../probe/proof.js';
import type { Reason } from '../reason/reason.js';
import type { VerdictCheck } from './verdict-check.js';
import { unmetObligation, type ProofObligations } from './proof-obligations.js';

export type VerdictOutcome = 'pass' | 'fail' | 'config' | 'internal' | 'interrupted';

export interface Verdict {
  readonly outcome: VerdictOutcome;
  readonly reason: Reason;
  readonly message: string;
  readonly evidence: readonly string[];
  readonly checks: readonly VerdictCheck[];
}

export interface VerdictInput {
  readonly checks: readonly VerdictCheck[];
  /** Undefined when the run stopped before a plan existed: then nothing can pass. */
  readonly obligations: ProofObligations | undefined;
  readonly proofs: readonly Proof[];
  readonly interruptedBy?: string;
}

/** Pass verdicts this module issued; a copy or a hand-made `{ outcome: 'pass' }` is not among them. */
const certified = new WeakSet<Verdict>();

/** The one test the exit code asks: exit 0 only for a verdict `decideVerdict` certified. */
export function isCertifiedPass(verdict: Verdict): boolean {
  return verdict.outcome === 'pass' && certified.has(verdict);
}

/**
 * Fail closed: the only pass is one where every family that had to be proven has a proof for
 * every planned target, every required check (the rules, when required) ran and passed, and
 * nothing failed. Anything else, including a check that never ran, is a failure.
 */
export function decideVerdict(input: VerdictInput): Verdict {
  const { checks } = input;
  if (input.interruptedBy !== undefined) {
    return verdict(
      'interrupted',
      'Interrupted',
      `validation was interrupted by ${input.interruptedBy} before interception was proven`,
      evidenceOf(checks),
      checks,
    );
  }
  const first = [...checks]
    .filter((check) => check.status === 'failed')
    .sort((a, b) => (a.precedence ?? 50) - (b.precedence ?? 50))[0];
  if (first) {
    const evidence = [...failedCheckLines(first), ...evidenceOf(checks.filter((check) => check !== first))];
    return verdict(
      first.failureClass === 'configuration' ? 'config' : first.failureClass === 'internal' ? 'internal' : 'fail',
      first.reason ?? 'ValidationFailed',
      first.message,
      evidence,
      checks,
    );
  }
  const unproven = notProven(input);
  if (unproven) return verdict('fail', 'NotProven', unproven, evidenceOf(checks), checks);
  const summary = checks
    .filter((check) => check.name.startsWith('probe-'))
    .map((check) => check.message)
    .join('; ');
  const pass = verdict('pass', 'Intercepted', summary, evidenceOf(checks), checks);
  certified.add(pass);
  return pass;
}

function notProven(input: VerdictInput): string | undefined {
  const missing = input.checks.find((check) => check.required && check.status !== 'passed');
  if (missing) return `required check ${missing.name} did not pass (${missing.status}): ${missing.message}`;
  if (!input.obligations) return 'no probe was planned, so no probe proved interception';
  if (
    input.obligations.rulesRequired &&
    !input.checks.some((check) => check.name === 'rules' && check.status === 'passed')
  ) {
    return 'the rules are required (--rules required) but no rules check passed';
  }
  const unmet = unmetObligation(input.obligations, input.proofs);
  return unmet ? `no probe proved interception: ${unmet}` : undefined;
}

function verdict(
  outcome: VerdictOutcome,
  reason: Reason,
  message: string,
  evidence: readonly string[],
  checks: readonly VerdictCheck[],
): Verdict {
  return Object.freeze({ outcome, reason, message, evidence, checks });
}

/** One line per check, all alike: `<check> <status>[ <Reason>]: <sentence>`. */
function checkLine(check: VerdictCheck, sentence: string): string {
  return `${check.name} ${check.status}${check.reason && check.status !== 'passed' ? ` ${check.reason}` : ''}: ${sentence}`;
}

/** The deciding check: its sentence is the message's, so its line points up and its evidence follows, indented. */
function failedCheckLines(check: VerdictCheck): string[] {
  if (check.evidence.length === 0) return [];
  return [checkLine(check, 'as above'), ...check.evidence.map((line) => `  ${line}`)];
}

function evidenceOf(checks: readonly VerdictCheck[]): string[] {
  return checks.map((check) => checkLine(check, check.message));
}
