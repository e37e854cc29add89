import type { PodView } from './pod-view.js';

const EVENT_COMPONENT = 'interlock-node';

/** A core/v1 Event about a pod or a node, as `kubectl describe` and `kubectl get events` read it. */
export interface AgentEvent {
  readonly apiVersion: 'v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: { readonly apiVersion: 'v1'; readonly kind: 'Pod' | 'Node'; readonly name: string; readonly namespace?: string; readonly uid: string; readonly fieldPath?: string };
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
const eventName = (object: string, now: Date, sequence: number): string => `${object}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(sequence)).toString(16)}`;
const clip = (text: string): string => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 3)}...` : text);

/** The Warning on a pod: the agent's reason, what it did, and the validator's own message. */
export function podEvent(view: PodView, reason: string, note: string, validatorMessage: string, container: string, node: string, now: Date, sequence: number): AgentEvent {
  const detail = validatorMessage ? ` Validator said: ${validatorMessage.split('\n', 1)[0]}` : '';
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(view.name, now, sequence), namespace: view.namespace },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: view.name, namespace: view.namespace, uid: view.uid, fieldPath: `spec.initContainers{${container}}` },
    reason,
    message: clip(`${note}${detail}`),
    type: 'Warning',
    source: { component: EVENT_COMPONENT, host: node },
    firstTimestamp: seconds(now),
    lastTimestamp: seconds(now),
    count: 1,
    reportingComponent: EVENT_COMPONENT,
    reportingInstance: node,
  };
}

/** An Event on the Node (posted in `default`, where the kubelet posts its node Events). */
export function nodeEvent(node: string, nodeUid: string, reason: string, message: string, type: 'Warning' | 'Normal', now: Date, sequence: number): AgentEvent {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(node, now, sequence), namespace: 'default' },
    involvedObject: { apiVersion: 'v1', kind: 'Node', name: node, uid: nodeUid },
    reason,
    message: clip(message),
    type,
    source: { component: EVENT_COMPONENT, host: node },
    firstTimestamp: seconds(now),
    lastTimestamp: seconds(now),
    count: 1,
    reportingComponent: EVENT_COMPONENT,
    reportingInstance: node,
  };
}
