import type { Family } from '../../addr/ip.js';
import type { InterceptionSpec } from '../../config/interception.js';
import type { ReadOutcome } from '../../rules/read/classify.js';
import type { RulesInspection } from '../../rules-check/inspection.js';

/** What the agent sends the analysis worker for one pod: plain data, copied by structured clone. */
export interface AnalysisRequest {
  readonly specs: readonly InterceptionSpec[];
  readonly outcomes: readonly ReadOutcome[];
  readonly families: readonly Family[];
  /** Time left until the pod's deadline, in ms: the worker's clock has its own origin. */
  readonly remainingMs: number;
}

/** One answer per configuration checked, in order, up to the first that passed (no report: the agent logs the sentence). */
export interface AnalysisAnswer {
  readonly inspections: readonly Pick<RulesInspection, 'status' | 'reason' | 'message' | 'evidence'>[];
}

/** The answer as the agent keeps it: each inspection's verdict and its first evidence lines. */
export function answerOf(inspections: readonly RulesInspection[]): AnalysisAnswer {
  return {
    inspections: inspections.map(({ status, reason, message, evidence }) => ({
      status,
      ...(reason !== undefined ? { reason } : {}),
      message,
      evidence: evidence.slice(0, 5),
    })),
  };
}
