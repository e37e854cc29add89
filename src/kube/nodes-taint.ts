import type { ClusterAccess } from './cluster-access.js';
import { call, type ApiResult } from './pods-api.js';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

interface NodeBody {
  metadata?: { resourceVersion?: string; uid?: string };
  spec?: { taints?: Taint[] };
}

const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`;

/**
 * Adds or removes one taint by read-modify-write: the node's taint list is replaced whole (core/v1
 * taints have no merge key), so the patch carries the resourceVersion it was computed from and a
 * concurrent change by the kubelet or an operator answers 409, and is retried on a fresh read.
 */
export async function setNodeTaint(
  access: ClusterAccess,
  node: string,
  taint: Taint,
  present: boolean,
  timeoutMs: number,
): Promise<ApiResult<'changed' | 'unchanged'>> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const read = await call(access, { method: 'GET', path: nodePath(node), timeoutMs }, [200]);
    if (!read.ok) return read;
    const body = read.value.body as NodeBody;
    const taints = body.spec?.taints ?? [];
    const has = taints.some((existing) => existing.key === taint.key && existing.effect === taint.effect);
    if (has === present) return { ok: true, value: 'unchanged' };
    const next = present
      ? [...taints, taint]
      : taints.filter((existing) => !(existing.key === taint.key && existing.effect === taint.effect));
    const patch = {
      metadata: { resourceVersion: body.metadata?.resourceVersion },
      spec: { taints: next.length > 0 ? next : null },
    };
    const written = await call(
      access,
      { method: 'PATCH', path: nodePath(node), body: patch, contentType: 'application/merge-patch+json', timeoutMs },
      [200, 409],
    );
    if (!written.ok) return written;
    if (written.value.status === 200) return { ok: true, value: 'changed' };
  }
  return {
    ok: false,
    error: {
      status: 409,
      retryAfterSeconds: undefined,
      message: `node ${node}: the taint ${taint.key}:${taint.effect} kept conflicting with other writers after 5 attempts`,
    },
  };
}
