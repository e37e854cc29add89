import { EXIT } from '../config/exit-codes.js';
import { isReason, type Reason } from '../reason/reason.js';
import type { PodView } from './pod-view.js';

/**
 * Reasons that mean the node's CNI did not do its job: a new pod (a new sandbox) can fix them.
 * Ambient's two are istio-cni's enrolment missing and ztunnel not bound in the pod, which it binds
 * at enrolment. A connection accepted by something other than ztunnel (ZtunnelArrivalUnseen) is
 * reported only: a relay or a stranger in the pod is not the CNI's to fix, and a new pod may be
 * the stranger's again.
 */
const RECREATE_REASONS: ReadonlySet<Reason> = new Set<Reason>([
  'PodNetworkMissing',
  'InterceptionMissing',
  'RulesMismatch',
  'AmbientNotCaptured',
  'ZtunnelNotListening',
]);

export interface Blocked {
  /** The first word of the termination message (`PodNetworkMissing`), or `Unknown`: the pod author's text, for Events only. */
  readonly reason: string;
  /** The reason as a metric label: one of the Reason union, or `Other`; never the pod author's free text. */
  readonly metricReason: Reason | 'Other';
  readonly message: string;
  readonly recreatable: boolean;
  /** The validator exited with the configuration-error code (64): only the pod's owner can fix it. */
  readonly misconfigured: boolean;
  readonly runId: string;
}

/**
 * A pod is blocked when its validator's most recent run ended with the mesh's failure exit code,
 * or with Interlock's configuration-error code (64), which blocks the pod as surely and which no
 * recreation fixes. The reason is the first word of the termination message; a message that does
 * not start with a word (empty, or a log tail) is `Unknown` and only reported: recreating on a
 * guess could loop.
 */
export function blockedOf(view: PodView, failureExitCode: number): Blocked | undefined {
  const run = view.validator;
  if (!run) return undefined;
  const misconfigured = run.exitCode === EXIT.invalidConfig;
  if (run.exitCode !== failureExitCode && !misconfigured) return undefined;
  const reason = reasonWord(run.message);
  return {
    reason,
    metricReason: isReason(reason) ? reason : 'Other',
    message: run.message.trim(),
    recreatable: !misconfigured && isReason(reason) && RECREATE_REASONS.has(reason),
    misconfigured,
    runId: run.runId,
  };
}

/** The first word of a termination message (`PodNetworkMissing: ...`), or `Unknown` when it starts with none. */
export function reasonWord(message: string): string {
  return /^([A-Za-z][A-Za-z0-9]*)(?::|\s|$)/.exec(message.trimStart())?.[1] ?? 'Unknown';
}
