import type { DataPlaneFinding } from './data-plane-finding.js';

/** One line of `interlock check`: what was checked, what was found and, when it is wrong, what to do. */
export type InstallCheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

export type InstallPart = 'cluster' | 'preflight' | 'webhook' | 'node-agent' | 'versions' | 'data-plane';

export interface InstallCheckResult {
  readonly part: InstallPart;
  /** Stable, for scripts reading `-o json`: `webhook.endpoints`. */
  readonly id: string;
  readonly status: InstallCheckStatus;
  readonly message: string;
  /** The command or change that fixes it (fail and warn only). */
  readonly fix?: string;
  /** The node agent judged (`NAMESPACE/NAME`), when one of several is: one agent runs per mesh. */
  readonly agent?: string;
  /** A data-plane finding's facts (pod, node, reason), for scripts reading `-o json`. */
  readonly finding?: DataPlaneFinding;
}

export const installCheck = (
  part: InstallPart,
  id: string,
  status: InstallCheckStatus,
  message: string,
  fix?: string,
  finding?: DataPlaneFinding,
): InstallCheckResult => ({
  part,
  id: `${part}.${id}`,
  status,
  message,
  ...(fix === undefined ? {} : { fix }),
  ...(finding === undefined ? {} : { finding }),
});
