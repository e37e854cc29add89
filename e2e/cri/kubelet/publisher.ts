import { randomUUID } from 'node:crypto';
import type { PodObject } from './pod-spec.js';

/** Where the kubelet's view of a pod goes: the API server (its status and Events), or nowhere. */
export interface Publisher {
  status(pod: PodObject, status: Record<string, unknown>): Promise<void>;
  event(pod: PodObject, event: PodEvent): Promise<void>;
}

export interface PodEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  /** `spec.initContainers{name}` for a container's Event, absent for the pod's. */
  readonly fieldPath?: string;
}

/** Keeps what would have been published, for tests with no API server. */
export class MemoryPublisher implements Publisher {
  readonly events: PodEvent[] = [];
  readonly statuses: Array<Record<string, unknown>> = [];
  async status(_pod: PodObject, status: Record<string, unknown>): Promise<void> {
    this.statuses.push(status);
  }
  async event(_pod: PodObject, event: PodEvent): Promise<void> {
    this.events.push(event);
  }
}

/**
 * The kubelet's two writes, over HTTP with the API server's wire format: a merge patch of
 * pods/NAME/status, and a core/v1 Event (source kubelet, the node as host). A pod that is gone
 * (404) is not an error: the kubelet stops publishing for it.
 */
export class ApiPublisher implements Publisher {
  constructor(
    private readonly baseUrl: string,
    private readonly nodeName: string,
  ) {}

  async status(pod: PodObject, status: Record<string, unknown>): Promise<void> {
    const { namespace, name } = pod.metadata;
    const response = await fetch(`${this.baseUrl}/api/v1/namespaces/${namespace}/pods/${name}/status`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ status }),
    });
    if (!response.ok && response.status !== 404)
      throw new Error(`status of ${namespace}/${name}: ${response.status} ${await response.text()}`);
  }

  async event(pod: PodObject, event: PodEvent): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${randomUUID().slice(0, 8)}`, namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name,
        namespace,
        uid,
        ...(event.fieldPath ? { fieldPath: event.fieldPath } : {}),
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      source: { component: 'kubelet', host: this.nodeName },
      reportingComponent: 'kubelet',
      reportingInstance: this.nodeName,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    const response = await fetch(`${this.baseUrl}/api/v1/namespaces/${namespace}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`event on ${namespace}/${name}: ${response.status} ${await response.text()}`);
  }
}
