import type { ApiFailure } from '../../kube/pods-api.js';
import type { PodEventType, PodWatchSink } from '../../kube/watch-pods.js';
import { recheckPodOf, type RecheckPod } from './meshed-pod.js';

/** Pods of one node the roster keeps at most: twice the kubelet's default maximum of 110, with room. */
const MAX_NODE_PODS = 256;

/**
 * The node's pods as the re-check sees them, fed by the agent's one pod watch (a second watch
 * would double the API server's load). Reduced on arrival and capped: a pod past the cap is not
 * kept, and the sweep says how many it could not look at.
 */
export class RecheckRoster implements PodWatchSink {
  private readonly pods = new Map<string, RecheckPod>();
  overflow = 0;

  constructor(private readonly node: string) {}

  snapshot(): readonly RecheckPod[] {
    return [...this.pods.values()];
  }

  relisted(pods: readonly unknown[]): void {
    this.pods.clear();
    this.overflow = 0;
    for (const pod of pods) this.changed('ADDED', pod);
  }

  changed(type: PodEventType, pod: unknown): void {
    const view = recheckPodOf(pod);
    if (!view) return;
    if (type === 'DELETED' || view.nodeName !== this.node) {
      this.pods.delete(view.uid);
      return;
    }
    if (!this.pods.has(view.uid) && this.pods.size >= MAX_NODE_PODS) {
      this.overflow += 1;
      return;
    }
    this.pods.set(view.uid, view);
  }

  restarted(): void {}
  apiError(_failure: ApiFailure): void {}
}

/** One watch, several sinks: the agent and the roster see every list and change in the same order. */
export function fanOut(...sinks: readonly PodWatchSink[]): PodWatchSink {
  return {
    relisted: (pods) => sinks.forEach((sink) => sink.relisted(pods)),
    changed: (type, pod) => sinks.forEach((sink) => sink.changed(type, pod)),
    restarted: (cause) => sinks.forEach((sink) => sink.restarted(cause)),
    apiError: (failure) => sinks.forEach((sink) => sink.apiError(failure)),
  };
}
