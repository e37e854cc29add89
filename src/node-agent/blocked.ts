import type { PodView } from './pod-view.js';

/** Reasons that mean the node's CNI did not do its job: a new pod (a new sandbox) can fix them. */
const RECREATE_REASONS: ReadonlySet<string> = new Set(['PodNetworkMissing', 'InterceptionMissing', 'RulesMismatch']);

export interface Blocked {
  /** The first word of the termination message (`PodNetworkMissing`), or `Unknown`. */
  readonly reason: string;
  readonly message: string;
  readonly recreatable: boolean;
  readonly runId: string;
}

/**
 * A pod is blocked when its validator's most recent run ended with the mesh's failure exit code.
 * The reason is the first word of the termination message; a message that does not start with a
 * word (empty, or a log tail) is `Unknown` and only reported: recreating on a guess could loop.
 */
export function blockedOf(view: PodView, failureExitCode: number): Blocked | undefined {
  const run = view.validator;
  if (!run || run.exitCode !== failureExitCode) return undefined;
  const word = /^([A-Za-z][A-Za-z0-9]*)(?::|\s|$)/.exec(run.message.trimStart())?.[1];
  const reason = word ?? 'Unknown';
  return { reason, message: run.message.trim(), recreatable: RECREATE_REASONS.has(reason), runId: run.runId };
}
