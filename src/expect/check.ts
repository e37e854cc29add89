import type { Ruleset } from '../rules/model.js';
import type { Outcome, TraceResult } from '../trace/outcome.js';
import { tracePacket } from '../trace/trace.js';
import { findingMessage, type Finding } from './finding.js';
import type { Expected, Question } from './questions.js';

export interface Answer {
  readonly question: Question;
  readonly trace: TraceResult;
  readonly holds: boolean;
  readonly finding: Finding | undefined;
}

export interface CheckResult {
  readonly status: 'passed' | 'failed' | 'unknown';
  readonly answers: readonly Answer[];
  /** Failures first (a definite mismatch outranks an unknown), in question order. */
  readonly findings: readonly Finding[];
}

export function outcomeMeets(outcome: Outcome, expected: Expected): boolean {
  switch (expected.kind) {
    case 'redirect':
      return outcome.kind === 'redirect' && outcome.port === expected.port;
    case 'tproxy':
      return outcome.kind === 'tproxy' && outcome.port === expected.port;
    case 'not-redirected':
      return outcome.kind === 'accept';
    case 'dropped':
      return outcome.kind === 'drop';
  }
}

/** Asks every question of the ruleset. Pure; an empty question list is not a pass. */
export function checkQuestions(ruleset: Ruleset, questions: readonly Question[]): CheckResult {
  const answers: Answer[] = questions.map((question) => {
    const trace = tracePacket(ruleset, question.packet);
    const holds = outcomeMeets(trace.outcome, question.expected);
    if (holds) return { question, trace, holds, finding: undefined };
    const reason = trace.outcome.kind === 'unknown' ? 'RulesUnknownMatch' : 'RulesMismatch';
    const finding: Finding = {
      reason,
      question,
      actual: trace.outcome,
      decidedBy: trace.decidedBy,
      path: trace.path,
      message: findingMessage(reason, question, trace.outcome, trace.decidedBy),
    };
    return { question, trace, holds, finding };
  });
  const findings = answers.flatMap((answer) => (answer.finding ? [answer.finding] : []));
  const mismatches = findings.filter((finding) => finding.reason === 'RulesMismatch');
  const unknowns = findings.filter((finding) => finding.reason !== 'RulesMismatch');
  const status = questions.length === 0 ? 'unknown' : mismatches.length > 0 ? 'failed' : unknowns.length > 0 ? 'unknown' : 'passed';
  return { status, answers, findings: [...mismatches, ...unknowns] };
}
