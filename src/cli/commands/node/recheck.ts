import type { Registry } from 'prom-client';
import type { ClusterAccess } from '../../../kube/cluster-access.js';
import { getNamespace } from '../../../kube/namespace-api.js';
import type { NodeAgent } from '../../../node-agent/agent.js';
import { REAL_CLOCK, type AgentLog } from '../../../node-agent/agent-settings.js';
import type { RuntimeClient } from '../../../node-agent/cri/cri-client.js';
import { netnsMountPaths } from '../../../node-agent/netns-dir.js';
import { readPodRules } from '../../../node-agent/recheck/netns-rules.js';
import { readPodSockets } from '../../../node-agent/recheck/netns-sockets.js';
import { namespaceMetaOf, type NamespaceMeta } from '../../../node-agent/recheck/meshed-pod.js';
import { RecheckLoop } from '../../../node-agent/recheck/recheck-loop.js';
import { AnalysisWorkers, rulesWorkerFile } from '../../../node-agent/recheck/worker-analysis.js';
import { analysePod } from '../../../node-agent/recheck/pod-analysis.js';
import { promRecheckMetrics } from '../../../node-agent/recheck/recheck-metrics.js';
import type { RecheckRoster } from '../../../node-agent/recheck/roster.js';
import type { NodeRecheck } from './config.js';

/**
 * The re-check's edges, composed: the runtime's CRI socket, the namespace reader, the rules read
 * (and an ambient pod's listeners) in a child that entered the pod's namespace, and the validator's own engine: on the event loop
 * for a pod's few KB of rules, in a worker thread with a heap cap for more
 * (src/node-agent/recheck/pod-analysis.ts; rules-worker.ts, bundled beside the CLI).
 */
export function startRecheck(
  recheck: NodeRecheck & { readonly runtime: RuntimeClient },
  parts: { access: ClusterAccess; agent: NodeAgent; roster: RecheckRoster; registry: Registry; log: AgentLog },
): RecheckLoop {
  const { runtime } = recheck;
  const workers = new AnalysisWorkers(rulesWorkerFile());
  const namespace = async (name: string): Promise<NamespaceMeta | undefined> => {
    const answer = await getNamespace(parts.access, name, 5000);
    if (answer.ok) return namespaceMetaOf(answer.value);
    parts.log.warn({ namespace: name, status: answer.error.status }, answer.error.message);
    return undefined;
  };
  const loop = new RecheckLoop(recheck, {
    pods: () => parts.roster.snapshot(),
    overflow: () => parts.roster.overflow,
    ports: {
      runtime,
      namespace,
      readRules: readPodRules,
      readSockets: readPodSockets,
      analyse: (request, deadlineMs) => analysePod(workers, request, deadlineMs),
      now: () => performance.now(),
      netnsDirs: netnsMountPaths(recheck.netnsDir),
    },
    reporter: parts.agent,
    metrics: promRecheckMetrics(parts.registry),
    log: parts.log,
    clock: REAL_CLOCK,
  });
  loop.start();
  return loop;
}
