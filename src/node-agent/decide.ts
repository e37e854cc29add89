import { EXIT } from '../config/exit-codes.js';
import { backoffVerdict, type BackoffPolicy, type BackoffState } from './backoff.js';
import type { Blocked } from './blocked.js';
import type { NodeAction } from './node-action.js';
import { ownerOf, type PodView } from './pod-view.js';

/** The Event reasons the agent posts on pods; `kubectl get events` shows them. */
export type PodEventReason =
  | 'InterlockRecreating'
  | 'InterlockMarked'
  | 'InterlockBlocked'
  | 'InterlockRecreateLimit'
  | 'InterlockHeld'
  | 'InterlockMisconfigured';

export type Decision =
  | {
      readonly kind: 'recreate';
      readonly how: 'delete' | 'label';
      readonly event: PodEventReason;
      readonly note: string;
    }
  | { readonly kind: 'report'; readonly event: PodEventReason; readonly note: string }
  /** The breaker is open: nothing is done now; the pod is looked at again when it closes. */
  | { readonly kind: 'hold'; readonly event: PodEventReason; readonly note: string }
  /** Backoff: come back at `untilMs`; nothing is posted yet. */
  | { readonly kind: 'wait'; readonly untilMs: number };

export interface DecisionInput {
  readonly view: PodView;
  readonly blocked: Blocked;
  readonly action: NodeAction;
  readonly breakerOpen: boolean;
  readonly backoff: BackoffState;
  readonly policy: BackoffPolicy;
  readonly now: number;
}

const JOB_NOTE = " The Job controller creates a replacement; this counts against the Job's backoffLimit.";

/** A validator that exits 64 blocks the pod for good: only its owner can fix its flags. */
const MISCONFIGURED: Decision = {
  kind: 'report',
  event: 'InterlockMisconfigured',
  note: `the validator exited ${EXIT.invalidConfig}: its configuration is invalid, and recreating the pod cannot fix that; fix the validator's flags or environment.`,
};

/** A pod that recreating cannot help, or that this agent may not recreate: only reported. */
function reportOnly(input: DecisionInput): Decision | undefined {
  const { blocked, view } = input;
  if (blocked.misconfigured) return MISCONFIGURED;
  if (!blocked.recreatable) {
    return {
      kind: 'report',
      event: 'InterlockBlocked',
      note: `${blocked.reason}: recreating the pod cannot fix this; left as it is.`,
    };
  }
  if (input.action === 'none') {
    return {
      kind: 'report',
      event: 'InterlockBlocked',
      note: `${blocked.reason}: the node's CNI did not set up this pod; --action none, so it is only reported.`,
    };
  }
  // Deleting is only a recreation when a controller makes a new pod: a bare pod would be gone for
  // good, and a static pod's mirror is recreated by the kubelet from the same manifest, same sandbox.
  if (input.action === 'delete' && (view.ownerKind === 'Pod' || view.ownerKind === 'Node')) {
    const what =
      view.ownerKind === 'Pod'
        ? 'no controller would recreate this pod'
        : 'a static pod is recreated by the kubelet, not by deleting it';
    return {
      kind: 'report',
      event: 'InterlockBlocked',
      note: `${blocked.reason}: the node's CNI did not set up this pod, but ${what}; left for an operator.`,
    };
  }
  return undefined;
}

/** What to do about one blocked pod. Pure: the same input always gives the same decision. */
export function decide(input: DecisionInput): Decision {
  const { blocked, view } = input;
  const reported = reportOnly(input);
  if (reported) return reported;
  if (input.breakerOpen) {
    return {
      kind: 'hold',
      event: 'InterlockHeld',
      note: `${blocked.reason}: too many blocked pods on node ${view.nodeName}; the circuit breaker is open, so this pod is not recreated now.`,
    };
  }
  const verdict = backoffVerdict(input.backoff, ownerOf(view).owner, input.policy, input.now);
  if (verdict.kind === 'wait') return { kind: 'wait', untilMs: verdict.untilMs };
  if (verdict.kind === 'exhausted') {
    return {
      kind: 'report',
      event: 'InterlockRecreateLimit',
      note: `${blocked.reason}: ${view.ownerKind} ${view.ownerUid}'s pods were recreated ${verdict.count} times on node ${view.nodeName} within ${Math.round(input.policy.windowMs / 1000)} s; left alone so it cannot loop.`,
    };
  }
  if (input.action === 'label') {
    return {
      kind: 'recreate',
      how: 'label',
      event: 'InterlockMarked',
      note: `${blocked.reason}: labelled interlock.dev/blocked for its controller to recreate.`,
    };
  }
  const job = view.ownerKind === 'Job' ? JOB_NOTE : '';
  return {
    kind: 'recreate',
    how: 'delete',
    event: 'InterlockRecreating',
    note: `${blocked.reason}: the node's CNI did not set up this pod; deleting it so that it is recreated.${job}`,
  };
}
