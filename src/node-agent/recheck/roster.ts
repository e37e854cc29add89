import type { ApiFailure } from '../../kube/pods-api.js';
import type { PodEventType, PodWatchSink } from '../../kube/watch-pods.js';
import { mayBeMeshed, recheckPodOf, type RecheckPod } from './meshed-pod.js';

/** Pods of one node the roster keeps at most: twice the kubelet's default maximum of 110, with room. */
const MAX_NODE_PODS = 256;
/** Refused uids remembered at most, so a flood of pods costs the agent bounded memory. */
const MAX_REFUSED = 4096;

/**
 * The node's running, meshable pods as the re-check sees them, fed by the agent's one pod watch (a
 * second watch would double the API server's load). Reduced on arrival and capped: a finished or
 * pending pod takes no slot (256 completed Jobs would otherwise push every running pod out), and a
 * running pod past the cap is counted (`overflow`, reported each sweep) until it goes.
 */
export class RecheckRoster implements PodWatchSink {
  private readonly pods = new Map<string, RecheckPod>();
  /** The running pods refused for want of a slot, by uid: as many as the node runs past the cap. */
  private readonly refused = new Set<string>();

  constructor(private readonly node: string) {}

  get overflow(): number {
    return this.refused.size;
  }

  snapshot(): readonly RecheckPod[] {
    return [...this.pods.values()];
  }

  relisted(pods: readonly unknown[]): void {
    this.pods.clear();
    this.refused.clear();
    for (const pod of pods) this.changed('ADDED', pod);
  }

  changed(type: PodEventType, pod: unknown): void {
    const view = recheckPodOf(pod);
    if (!view) return;
    if (type === 'DELETED' || view.nodeName !== this.node || !view.running || !mayBeMeshed(view)) {
      this.pods.delete(view.uid);
      this.refused.delete(view.uid);
      return;
    }
    if (!this.pods.has(view.uid) && this.pods.size >= MAX_NODE_PODS) {
      // Bounded by the node's own pods (the watch is scoped to it) and by the cap below.
      if (this.refused.size < MAX_REFUSED) this.refused.add(view.uid);
      return;
    }
    this.refused.delete(view.uid);
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
