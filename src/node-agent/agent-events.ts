import type { LostReason } from './recheck/pod-capture.js';
import { createHash } from 'node:crypto';
import type { PodView } from './pod-view.js';

const EVENT_COMPONENT = 'interlock-node';

/** A core/v1 Event about a pod or a node, as `kubectl describe` and `kubectl get events` read it. */
export interface AgentEvent {
  readonly apiVersion: 'v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: {
    readonly apiVersion: 'v1';
    readonly kind: 'Pod' | 'Node';
    readonly name: string;
    readonly namespace?: string;
    readonly uid: string;
    readonly fieldPath?: string;
  };
  readonly reason: string;
  readonly message: string;
  readonly type: 'Warning' | 'Normal';
  readonly source: { readonly component: string; readonly host: string };
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly count: number;
  readonly reportingComponent: string;
  readonly reportingInstance: string;
}

const MAX_MESSAGE = 1024;
const seconds = (now: Date): string => now.toISOString().replace(/\.\d{3}Z$/, 'Z');
// client-go names an Event `<object>.<unix nanos in hex>`: unique per report and sortable.
const eventName = (object: string, now: Date, sequence: number): string =>
  `${object}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(sequence)).toString(16)}`;
/**
 * A pod Event's name is derived from what it reports (the pod's uid and `key`), not from the time:
 * the API server refuses a second Event of that name (409), so an agent that restarted and lost
 * its memory posts nothing new for a report that is already on the pod.
 */
const MAX_NAME = 253;
const HASH_CHARS = 16;
const reportEventName = (pod: string, uid: string, key: string): string => {
  const hash = createHash('sha256').update(`${uid}\0${key}`).digest('hex').slice(0, HASH_CHARS);
  const prefix = pod.slice(0, MAX_NAME - HASH_CHARS - 1).replace(/[.-]+$/, '');
  return `${prefix}.${hash}`;
};
const clip = (text: string): string => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 3)}...` : text);

type InvolvedObject = AgentEvent['involvedObject'];

/** What an Event of the agent is about, said once; the frame (source, times, reporter) is shared. */
interface EventContent {
  readonly involvedObject: InvolvedObject;
  readonly namespace: string;
  readonly reason: string;
  readonly message: string;
  readonly type: 'Warning' | 'Normal';
}

function agentEvent(content: EventContent, node: string, now: Date, name: string): AgentEvent {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: content.namespace },
    involvedObject: content.involvedObject,
    reason: content.reason,
    message: clip(content.message),
    type: content.type,
    source: { component: EVENT_COMPONENT, host: node },
    firstTimestamp: seconds(now),
    lastTimestamp: seconds(now),
    count: 1,
    reportingComponent: EVENT_COMPONENT,
    reportingInstance: node,
  };
}

/** The report a pod Event makes: its reason, what the agent did, and what names it once per pod. */
export interface PodReport {
  readonly reason: string;
  readonly note: string;
  readonly validatorMessage: string;
  /** Equal for a report the agent must post only once on this pod (reason and run, or reason and Reason). */
  readonly key: string;
}

/** The Warning on a pod: the agent's reason, what it did, and the validator's own message. */
export function podEvent(view: PodView, report: PodReport, container: string, node: string, now: Date): AgentEvent {
  const { reason, note, validatorMessage } = report;
  const detail = validatorMessage ? ` Validator said: ${validatorMessage.split('\n', 1)[0]}` : '';
  const involvedObject: InvolvedObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    name: view.name,
    namespace: view.namespace,
    uid: view.uid,
    fieldPath: `spec.initContainers{${container}}`,
  };
  return agentEvent(
    { involvedObject, namespace: view.namespace, reason, message: `${note}${detail}`, type: 'Warning' },
    node,
    now,
    reportEventName(view.name, view.uid, report.key),
  );
}

/** An Event on the Node (posted in `default`, where the kubelet posts its node Events). */
export function nodeEvent(
  node: string,
  nodeUid: string,
  reason: string,
  message: string,
  type: 'Warning' | 'Normal',
  now: Date,
  sequence: number,
): AgentEvent {
  const involvedObject: InvolvedObject = { apiVersion: 'v1', kind: 'Node', name: node, uid: nodeUid };
  return agentEvent(
    { involvedObject, namespace: 'default', reason, message, type },
    node,
    now,
    eventName(node, now, sequence),
  );
}

/**
 * The re-check's Warning: the pod's capture is gone (reason `CaptureLost`) or, ambient, ztunnel's
 * listeners in it (`ZtunnelNotListening`), in the validator's own
 * words. Named from the pod's uid and `key` like the other pod reports: posted once per loss.
 */
export function captureLostEvent(
  pod: { readonly name: string; readonly namespace: string; readonly uid: string },
  message: string,
  node: string,
  now: Date,
  key: string,
  reason: LostReason = 'CaptureLost',
): AgentEvent {
  const involvedObject: InvolvedObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    name: pod.name,
    namespace: pod.namespace,
    uid: pod.uid,
  };
  return agentEvent(
    { involvedObject, namespace: pod.namespace, reason, message, type: 'Warning' },
    node,
    now,
    reportEventName(pod.name, pod.uid, key),
  );
}
