import type { ClusterAccess } from '../kube/cluster-access.js';
import { setNodeTaint, type Taint } from '../kube/nodes-taint.js';
import {
  createEvent,
  deletePod,
  labelPod,
  type ApiResult,
  type CreateOutcome,
  type DeleteOutcome,
  type PodRef,
} from '../kube/pods-api.js';
import type { AgentEvent } from './agent-events.js';

/** The writes the agent makes, as a port: the Kubernetes adapter in production, fakes in unit tests. */
export interface AgentApi {
  deletePod(ref: PodRef): Promise<ApiResult<DeleteOutcome>>;
  labelPod(ref: PodRef): Promise<ApiResult<DeleteOutcome>>;
  createEvent(event: AgentEvent): Promise<ApiResult<CreateOutcome>>;
  setTaint(present: boolean): Promise<ApiResult<'changed' | 'unchanged'>>;
}

const BLOCKED_LABEL = 'interlock.dev/blocked';
export const NODE_TAINT: Taint = { key: 'interlock.dev/cni-not-ready', effect: 'NoSchedule' };

export function kubeAgentApi(access: ClusterAccess, node: string, timeoutMs: number): AgentApi {
  return {
    deletePod: (ref) => deletePod(access, ref, timeoutMs),
    labelPod: (ref) => labelPod(access, ref, BLOCKED_LABEL, 'true', timeoutMs),
    createEvent: (event) => createEvent(access, event.metadata.namespace, event, timeoutMs),
    setTaint: (present) => setNodeTaint(access, node, NODE_TAINT, present, timeoutMs),
  };
}
