import type { ApiFailure } from '../kube/pods-api.js';
import type { PodEventType, PodWatchSink } from '../kube/watch-pods.js';
import { pluginFailureOf, SANDBOX_FAILED_REASON, type PluginFailure } from './sandbox-failure.js';

/** A mesh plugin failure seen in a kubelet Event of this node: new occurrences only. */
export interface SandboxSighting extends PluginFailure {
  readonly pod: string;
  /** New occurrences (the kubelet folds repeats into one Event and raises its `count`). */
  readonly occurrences: number;
  /** When the last occurrence happened, on the wall clock (the Event's lastTimestamp). */
  readonly atWallMs: number;
}

interface EventShape {
  metadata?: { uid?: unknown };
  reason?: unknown;
  message?: unknown;
  count?: unknown;
  lastTimestamp?: unknown;
  eventTime?: unknown;
  firstTimestamp?: unknown;
  source?: { component?: unknown; host?: unknown };
  reportingComponent?: unknown;
  reportingInstance?: unknown;
  involvedObject?: { kind?: unknown; namespace?: unknown; name?: unknown };
}

const MAX_REMEMBERED = 2048;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

function timeOf(event: EventShape): number | undefined {
  for (const value of [event.lastTimestamp, event.eventTime, event.firstTimestamp]) {
    const ms = typeof value === 'string' ? Date.parse(value) : NaN;
    if (Number.isFinite(ms)) return ms;
  }
  return undefined;
}

/** The kubelet of `node` reported it about a pod: its source (or, in events.k8s.io terms, its reporting instance). */
function fromKubeletOf(event: EventShape, node: string): boolean {
  const component = str(event.source?.component) || str(event.reportingComponent);
  const host = str(event.source?.host) || str(event.reportingInstance);
  return component === 'kubelet' && host === node && event.involvedObject?.kind === 'Pod';
}

/**
 * The events watch's sink: keeps each `FailedCreatePodSandBox` Event's last count (by uid) and
 * reports the new occurrences whose message names the mesh's plugin. Events of other nodes, of
 * other plugins, or not from the kubelet are ignored; the memory is bounded.
 */
export class SandboxEventSink implements PodWatchSink {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly node: string,
    private readonly plugin: string,
    private readonly onSighting: (sighting: SandboxSighting) => void,
    private readonly onApiError: (failure: ApiFailure) => void,
  ) {}

  relisted(events: readonly unknown[]): void {
    for (const event of events) this.changed('ADDED', event);
  }

  changed(type: PodEventType, object: unknown): void {
    const event = (object ?? {}) as EventShape;
    const uid = str(event.metadata?.uid);
    if (type === 'DELETED' || !uid) {
      this.counts.delete(uid);
      return;
    }
    if (event.reason !== SANDBOX_FAILED_REASON || !fromKubeletOf(event, this.node)) return;
    const failure = pluginFailureOf(str(event.message), this.plugin);
    const at = timeOf(event);
    if (!failure || at === undefined) return;
    const count = typeof event.count === 'number' && event.count > 0 ? Math.floor(event.count) : 1;
    const seen = this.counts.get(uid) ?? 0;
    this.remember(uid, Math.max(seen, count));
    if (count <= seen) return;
    const pod = `${str(event.involvedObject?.namespace)}/${str(event.involvedObject?.name)}`;
    this.onSighting({ ...failure, pod, occurrences: count - seen, atWallMs: at });
  }

  restarted(): void {}

  apiError(failure: ApiFailure): void {
    this.onApiError(failure);
  }

  private remember(uid: string, count: number): void {
    this.counts.delete(uid);
    this.counts.set(uid, count);
    if (this.counts.size > MAX_REMEMBERED) this.counts.delete(this.counts.keys().next().value as string);
  }
}
