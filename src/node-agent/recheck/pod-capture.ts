import type { Reason } from '../../reason/reason.js';
import type { RulesInspection } from '../../rules-check/inspection.js';

/**
 * Why a pod is lost: its rules let a region of packets escape (the Event `CaptureLost`), or, for
 * an ambient pod, its rules are intact but ztunnel no longer listens in it (istio/istio#57285): an
 * outage of the pod's traffic, not a capture gone, under the validator's own reason.
 */
export type LostReason = 'CaptureLost' | Extract<Reason, 'ZtunnelNotListening'>;

/**
 * One pod's answer in one sweep. `lost` only when the rules were read whole and a region of
 * packets provably escapes the proxy (the validator's RulesMismatch); anything the agent could
 * not read or decide is `unknown`, with a bounded reason for the metric and a sentence for the log.
 */
export type PodCapture =
  | { readonly kind: 'captured'; readonly message: string }
  | {
      readonly kind: 'lost';
      readonly reason: LostReason;
      readonly message: string;
      readonly evidence: readonly string[];
    }
  | { readonly kind: 'unknown'; readonly cause: UnknownCause; readonly message: string };

/** The metric label of an unknown: a closed set, never text from a pod or the runtime. */
export type UnknownCause =
  | 'terminating'
  | 'not-running'
  | 'no-sandbox'
  | 'netns-closed'
  | 'runtime-unreachable'
  | 'runtime-timeout'
  | 'runtime-error'
  | 'rules-unreadable'
  /** Over the readers' output cap, a child's memory limit, or the analysis worker's heap cap. */
  | 'rules-too-large'
  | 'rules-undecided'
  | 'sockets-unreadable'
  | 'no-expectation'
  | 'deadline';

export function unknown(cause: UnknownCause, message: string): PodCapture {
  return { kind: 'unknown', cause, message };
}

/** The rules check's answer (read with `required`, so nothing unread ever passes) as a pod check. */
export function podCaptureOf(
  inspection: Pick<RulesInspection, 'status' | 'reason' | 'message' | 'evidence'>,
): PodCapture {
  if (inspection.reason === 'RulesTooLarge') return unknown('rules-too-large', inspection.message);
  switch (inspection.status) {
    case 'passed':
      return { kind: 'captured', message: inspection.message };
    case 'failed':
      return {
        kind: 'lost',
        reason: 'CaptureLost',
        message: inspection.message,
        evidence: inspection.evidence.slice(0, 5),
      };
    case 'unknown':
      return unknown('rules-undecided', inspection.message);
    default:
      return unknown('rules-unreadable', inspection.message);
  }
}
