import type { Provenance } from '../rules/model.js';
import { describeOutcome, type Outcome, type TraceStep } from '../trace/outcome.js';
import type { Expected, Question } from './questions.js';

/**
 * Stable reason codes. `RulesMismatch`: a packet ends up somewhere the configuration forbids.
 * `RulesUnknownMatch`: the answer depends on a rule the tracer cannot evaluate (never a pass).
 */
export type FindingReason = 'RulesMismatch' | 'RulesUnknownMatch';

export interface Finding {
  readonly reason: FindingReason;
  readonly question: Question;
  readonly actual: Outcome;
  readonly decidedBy: Provenance | undefined;
  readonly path: readonly TraceStep[];
  /** One sentence: the packet, the rule that decided it, what was expected instead. */
  readonly message: string;
}

export function describeExpected(expected: Expected): string {
  switch (expected.kind) {
    case 'redirect':
      return `redirected to local port ${expected.port}`;
    case 'tproxy':
      return `diverted by TPROXY to port ${expected.port}`;
    case 'not-redirected':
      return 'not redirected';
    case 'dropped':
      return 'dropped';
  }
}

export function describeRule(at: Provenance | undefined): string {
  if (!at) return 'no rule (no chain is hooked there)';
  const family = at.family === 'ipv4' ? 'ip' : at.family === 'ipv6' ? 'ip6' : 'inet';
  const place = at.position > 0 ? `rule ${at.position} of ${at.table} ${at.chain}` : `the policy of ${at.table} ${at.chain}`;
  return `${place} (${at.backend}, ${family}): ${at.text}`;
}

export function findingMessage(reason: FindingReason, question: Question, actual: Outcome, decidedBy: Provenance | undefined): string {
  if (reason === 'RulesUnknownMatch') {
    const why = actual.kind === 'unknown' ? actual.why : describeOutcome(actual);
    return `${question.description}: cannot tell where it ends up, ${why}, at ${describeRule(actual.kind === 'unknown' ? actual.rule ?? decidedBy : decidedBy)}; expected ${describeExpected(question.expected)} (${question.because})`;
  }
  return `${question.description} is ${describeOutcome(actual)} by ${describeRule(decidedBy)}; expected ${describeExpected(question.expected)} because ${question.because}`;
}
