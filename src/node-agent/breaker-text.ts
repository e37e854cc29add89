import type { BreakerPolicy } from './breaker.js';
import type { CniAuditVerdict } from './cni-audit-source.js';

/** A node Event's reason, message and type. */
export interface NodeEventText {
  readonly reason: string;
  readonly message: string;
  readonly type: 'Warning' | 'Normal';
}

const seconds = (ms: number): number => Math.round(ms / 1000);

/**
 * The Node Event a CNI audit verdict posts: every change of verdict, healthy or not, and a new
 * message while it fails; the first verdict only when it fails. Undefined: nothing to say.
 */
export function auditEventOf(
  previous: CniAuditVerdict | undefined,
  verdict: CniAuditVerdict,
  node: string,
): NodeEventText | undefined {
  const changed =
    verdict.healthy !== (previous?.healthy ?? true) ||
    (previous !== undefined && !verdict.healthy && verdict.message !== previous.message);
  if (!changed) return undefined;
  return verdict.healthy
    ? {
        reason: 'InterlockCniConfigHealthy',
        message: `The CNI configuration audit of node ${node} is healthy again.`,
        type: 'Normal',
      }
    : {
        reason: 'InterlockCniConfigBroken',
        message: `CNI configuration audit failed: ${verdict.message}`,
        type: 'Warning',
      };
}

/** Why an audit opened the breaker: its message, and that a validator failure confirmed it. */
export function auditCause(message: string, policy: BreakerPolicy): string {
  return `CNI audit: ${message} (confirmed by a validator failure on this node within ${seconds(policy.windowMs)} s)`;
}

/** Why the breaker opened: `cause` when one is known (an audit's), else the count that tripped it. */
export function openedWhy(cause: string, policy: BreakerPolicy): string {
  const { threshold, windowMs, minNamespaces } = policy;
  const where = minNamespaces > 1 ? `at least ${minNamespaces} namespaces` : 'any namespace';
  return cause || `pods of more than ${threshold} owners in ${where} blocked within ${seconds(windowMs)} s`;
}

export function breakerOpenedEvent(node: string, why: string, taint: boolean): NodeEventText {
  const tainted = taint ? ' Tainted interlock.dev/cni-not-ready:NoSchedule so new pods go elsewhere.' : '';
  return {
    reason: 'InterlockBreakerOpen',
    message: `Stopped recreating pods on node ${node}: ${why}; the node's CNI is suspect.${tainted}`,
    type: 'Warning',
  };
}

export function breakerClosedEvent(node: string, policy: BreakerPolicy): NodeEventText {
  return {
    reason: 'InterlockBreakerClosed',
    message: `Node ${node} stayed healthy for ${seconds(policy.windowMs)} s; recreating blocked pods again.`,
    type: 'Normal',
  };
}
