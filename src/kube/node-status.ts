import type { ClusterAccess } from './cluster-access.js';
import { call, type ApiResult } from './pods-api.js';
import type { Taint } from './nodes-taint.js';

/** A core/v1 NodeCondition, as `kubectl describe node` shows it. */
export interface NodeCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastHeartbeatTime: string;
  readonly lastTransitionTime: string;
}

export interface NodeState {
  readonly conditions: readonly Partial<NodeCondition>[];
  readonly taints: readonly Taint[];
}

const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`;

/** The node's conditions and taints (a condition the agent wrote before it restarted keeps its transition time). */
export async function readNodeState(
  access: ClusterAccess,
  node: string,
  timeoutMs: number,
): Promise<ApiResult<NodeState>> {
  const read = await call(access, { method: 'GET', path: nodePath(node), timeoutMs }, [200]);
  if (!read.ok) return read;
  const body = read.value.body as { status?: { conditions?: unknown }; spec?: { taints?: unknown } } | undefined;
  const conditions = Array.isArray(body?.status?.conditions)
    ? (body.status.conditions as Partial<NodeCondition>[])
    : [];
  const taints = Array.isArray(body?.spec?.taints) ? (body.spec.taints as Taint[]) : [];
  return { ok: true, value: { conditions, taints } };
}

/**
 * Sets one condition through the status subresource with a strategic merge patch: `conditions`
 * merges by `type`, so the kubelet's conditions (Ready, MemoryPressure, ...) and other agents' are
 * untouched and no resourceVersion is needed (what is written is this condition alone).
 */
export async function patchNodeCondition(
  access: ClusterAccess,
  node: string,
  condition: NodeCondition,
  timeoutMs: number,
): Promise<ApiResult<'written'>> {
  const answer = await call(
    access,
    {
      method: 'PATCH',
      path: `${nodePath(node)}/status`,
      body: { status: { conditions: [condition] } },
      contentType: 'application/strategic-merge-patch+json',
      timeoutMs,
    },
    [200],
  );
  return answer.ok ? { ok: true, value: 'written' } : answer;
}
