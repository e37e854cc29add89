import type { Reason } from '../reason/reason.js';

/**
 * One thing the validator established, or failed to. `not-inspected` and `not-run` are never a
 * pass: they say a check did not happen, and the verdict treats them accordingly.
 */
export type CheckStatus = 'passed' | 'failed' | 'not-inspected' | 'not-run';

/** Which exit class a failed check belongs to: the pod is unmeshed, the validator is misconfigured, or it has a bug. */
export type FailureClass = 'validation' | 'configuration' | 'internal';

export interface VerdictCheck {
  readonly name: string;
  readonly status: CheckStatus;
  /** Set on failures (and on passes worth naming). */
  readonly reason?: Reason;
  readonly message: string;
  readonly evidence: readonly string[];
  readonly failureClass?: FailureClass;
  /** Lower decides first when several checks fail: the most specific explanation leads. */
  readonly precedence?: number;
  readonly required: boolean;
}

export function passed(name: string, message: string, evidence: readonly string[] = []): VerdictCheck {
  return { name, status: 'passed', message, evidence, required: true };
}

export function failed(
  name: string,
  reason: Reason,
  message: string,
  evidence: readonly string[] = [],
  failureClass: FailureClass = 'validation',
  precedence = 50,
): VerdictCheck {
  return { name, status: 'failed', reason, message, evidence, failureClass, precedence, required: true };
}
