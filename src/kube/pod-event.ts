import { createHash } from 'node:crypto';
import { reasonHeadline } from '../reason/guide.js';
import { isReason } from '../reason/reason.js';

/** The pod an Event is about, from the downward API (POD_NAME, POD_NAMESPACE, POD_UID). */
export interface PodRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
}

export interface FailureEventInput {
  readonly pod: PodRef;
  /** The termination reason: `InterceptionMissing`. */
  readonly reason: string;
  /** The whole termination message; the Event carries its first sentence. */
  readonly terminationMessage: string;
  /** The init container that failed, so `fieldPath` points at it. */
  readonly containerName?: string;
  /** Who reports: the node or pod name; `reportingInstance` and `source.host`. */
  readonly instance: string;
  readonly now: Date;
}

/** A core/v1 Event as the API server takes it (the fields kubectl describe shows, and the ones it validates). */
export interface CoreV1Event {
  readonly apiVersion: 'v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: {
    readonly apiVersion: 'v1';
    readonly kind: 'Pod';
    readonly name: string;
    readonly namespace: string;
    readonly uid?: string;
    readonly fieldPath?: string;
  };
  readonly reason: string;
  readonly message: string;
  readonly type: 'Warning';
  readonly source: { readonly component: string; readonly host?: string };
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly count: 1;
  readonly eventTime: string;
  readonly action: string;
  readonly reportingComponent: string;
  readonly reportingInstance: string;
}

const EVENT_COMPONENT = 'interlock';
/** events.k8s.io caps a note at 1 KiB; core/v1 does not, but describe output stays readable. */
const MAX_MESSAGE = 1024;

/** The Warning a blocked pod's owner sees under Events in `kubectl describe pod`. */
export function buildFailureEvent(input: FailureEventInput): CoreV1Event {
  const seconds = input.now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const micro = input.now.toISOString().replace(/Z$/, '000Z');
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(input.pod, input.reason), namespace: input.pod.namespace },
    involvedObject: {
      apiVersion: 'v1',
      kind: 'Pod',
      name: input.pod.name,
      namespace: input.pod.namespace,
      ...(input.pod.uid ? { uid: input.pod.uid } : {}),
      ...(input.containerName ? { fieldPath: `spec.initContainers{${input.containerName}}` } : {}),
    },
    reason: input.reason,
    message: firstSentence(input.terminationMessage, input.reason),
    type: 'Warning',
    source: { component: EVENT_COMPONENT, host: input.instance },
    firstTimestamp: seconds,
    lastTimestamp: seconds,
    count: 1,
    eventTime: micro,
    action: 'Validate',
    reportingComponent: EVENT_COMPONENT,
    reportingInstance: input.instance.slice(0, 128),
  };
}

/**
 * One name per pod (by uid) and reason, so a validator failing on every restart of a crash loop
 * counts up one Event (`x5 over 3m` in describe) instead of adding one per restart; a recreated
 * pod of the same name has a new uid and its own Event.
 */
function eventName(pod: PodRef, reason: string): string {
  const digest = createHash('sha256')
    .update(`${pod.namespace}/${pod.name}/${pod.uid ?? ''}/${reason}`)
    .digest('hex')
    .slice(0, 16);
  return `${pod.name.slice(0, 253 - 17)}.${digest}`;
}

/**
 * The first sentence of a termination message (after the reason's headline line), without its leading `Reason: ` (the Event has its
 * own reason field). A sentence ends at a full stop followed by a space; dots inside addresses
 * (`192.0.2.1:20001`) do not end it.
 */
export function firstSentence(message: string, reason: string): string {
  // Interlock's own messages open with the reason's headline; the sentence naming the address,
  // port or rule is the next line, and the Event's reason field already says the rest.
  const lines = message.split('\n', 2);
  const headline = isReason(reason) && lines[0] === reasonHeadline(reason);
  const firstLine = (headline ? lines[1] : lines[0]) ?? '';
  const body = firstLine.startsWith(`${reason}: `) ? firstLine.slice(reason.length + 2) : firstLine;
  const end = body.search(/\.\s/);
  const sentence = (end < 0 ? body : body.slice(0, end + 1)).trim();
  return sentence.length > MAX_MESSAGE ? `${sentence.slice(0, MAX_MESSAGE - 3)}...` : sentence;
}
