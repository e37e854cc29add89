import { Counter, Gauge, Registry } from 'prom-client';
import type { Reason } from '../reason/reason.js';

/** What the agent reports, as a port; `promAgentMetrics` is the Prometheus implementation. */
export interface AgentMetrics {
  podsWatched(count: number): void;
  /** Labelled by the Reason union or `Other` only: the termination message is the pod author's text. */
  blocked(reason: Reason | 'Other'): void;
  action(kind: string, result: string): void;
  breakerOpen(open: boolean): void;
  watchRestart(cause: string): void;
  apiError(operation: string, status: number): void;
  queueDepth(depth: number): void;
  cniAudit(healthy: boolean): void;
}

export function promAgentMetrics(registry: Registry): AgentMetrics {
  const registers = [registry];
  // Gauges are registered at their first value: before it (the first list, the first audit) they
  // are absent, never a 0 that reads as "no pods" or "failing".
  const watched = lazyGauge({
    name: 'interlock_node_pods_watched',
    help: 'Pods on this node that carry the validator container (absent until the first list).',
    registers,
  });
  const blocked = new Counter({
    name: 'interlock_node_blocked_pods_total',
    help: 'Validator failures seen (each run once), by reason.',
    labelNames: ['reason'],
    registers,
  });
  const actions = new Counter({
    name: 'interlock_node_actions_total',
    help: 'Actions taken, by kind and result.',
    labelNames: ['kind', 'result'],
    registers,
  });
  const breaker = new Gauge({
    name: 'interlock_node_breaker_open',
    help: '1 while the node circuit breaker is open.',
    registers,
  });
  const restarts = new Counter({
    name: 'interlock_node_watch_restarts_total',
    help: 'Pod watch restarts, by cause (dropped, expired, error).',
    labelNames: ['cause'],
    registers,
  });
  const errors = new Counter({
    name: 'interlock_node_api_errors_total',
    help: 'Failed Kubernetes API calls, by operation and HTTP status (0: no answer).',
    labelNames: ['operation', 'status'],
    registers,
  });
  const depth = lazyGauge({ name: 'interlock_node_queue_depth', help: 'Pods waiting in the work queue.', registers });
  const audit = lazyGauge({
    name: 'interlock_node_cni_audit_healthy',
    help: "1 while the node's CNI configuration audit is healthy, 0 while it fails (absent without an audit).",
    registers,
  });
  breaker.set(0);
  return {
    podsWatched: (count) => watched(count),
    blocked: (reason) => blocked.inc({ reason }),
    action: (kind, result) => actions.inc({ kind, result }),
    breakerOpen: (open) => breaker.set(open ? 1 : 0),
    watchRestart: (cause) => restarts.inc({ cause }),
    apiError: (operation, status) => errors.inc({ operation, status: String(status) }),
    queueDepth: (value) => depth(value),
    cniAudit: (healthy) => audit(healthy ? 1 : 0),
  };
}

/** A label-less gauge that exists only once it has a value: prom-client prints an unset one as 0. */
function lazyGauge(config: { name: string; help: string; registers: Registry[] }): (value: number) => void {
  let gauge: Gauge | undefined;
  return (value) => (gauge ??= new Gauge(config)).set(value);
}

/** The node gate's metrics: whether the node is ready for the mesh, and the mesh plugin's sandbox failures by cause. */
export function promGateMetrics(registry: Registry): {
  meshReady(status: 'True' | 'False' | 'Unknown'): void;
  pluginFailures(cause: string, count: number): void;
} {
  const registers = [registry];
  const ready = lazyGauge({
    name: 'interlock_node_mesh_ready',
    help: 'The node condition interlock.dev/MeshCNIReady: 1 True, 0 False (absent while Unknown).',
    registers,
  });
  const failures = new Counter({
    name: 'interlock_node_mesh_plugin_failures_total',
    help: "Pod sandboxes the mesh's CNI plugin failed (kubelet FailedCreatePodSandBox Events of this node), by cause.",
    labelNames: ['cause'],
    registers,
  });
  return {
    meshReady: (status) => {
      if (status !== 'Unknown') ready(status === 'True' ? 1 : 0);
    },
    pluginFailures: (cause, count) => failures.inc({ cause }, count),
  };
}
