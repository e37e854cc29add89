/** One line of `interlock check`: what was checked, what was found and, when it is wrong, what to do. */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

export type CheckPart = 'cluster' | 'webhook' | 'node-agent' | 'versions';

export interface CheckResult {
  readonly part: CheckPart;
  /** Stable, for scripts reading `-o json`: `webhook.endpoints`. */
  readonly id: string;
  readonly status: CheckStatus;
  readonly message: string;
  /** The command or change that fixes it (fail and warn only). */
  readonly fix?: string;
}

export const check = (
  part: CheckPart,
  id: string,
  status: CheckStatus,
  message: string,
  fix?: string,
): CheckResult => ({ part, id: `${part}.${id}`, status, message, ...(fix === undefined ? {} : { fix }) });
