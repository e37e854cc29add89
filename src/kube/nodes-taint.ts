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

/** A change to the node's taints: the new list, or undefined when nothing is to change. */
type TaintEdit = (taints: readonly Taint[]) => readonly Taint[] | undefined;

/**
 * Edits the taints by read-modify-write: the node's taint list is replaced whole (core/v1 taints
 * have no merge key), so the patch carries the resourceVersion it was computed from and a concurrent
 * change by the kubelet or an operator answers 409, and is retried on a fresh read: another
 * writer's taint is never lost.
 */
async function editNodeTaints(
  access: ClusterAccess,
  node: string,
  edit: TaintEdit,
  what: string,
  timeoutMs: number,
): Promise<ApiResult<'changed' | 'unchanged'>> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const read = await call(access, { method: 'GET', path: nodePath(node), timeoutMs }, [200]);
    if (!read.ok) return read;
    const body = read.value.body as NodeBody;
    const next = edit(body.spec?.taints ?? []);
    if (next === undefined) return { ok: true, value: 'unchanged' };
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
      message: `node ${node}: the taint ${what} kept conflicting with other writers after 5 attempts`,
    },
  };
}

/** Adds or removes one taint (key and effect). */
export function setNodeTaint(
  access: ClusterAccess,
  node: string,
  taint: Taint,
  present: boolean,
  timeoutMs: number,
): Promise<ApiResult<'changed' | 'unchanged'>> {
  const same = (existing: Taint) => existing.key === taint.key && existing.effect === taint.effect;
  const edit: TaintEdit = (taints) => {
    if (taints.some(same) === present) return undefined;
    return present ? [...taints, taint] : taints.filter((existing) => !same(existing));
  };
  return editNodeTaints(access, node, edit, `${taint.key}:${taint.effect}`, timeoutMs);
}

/** Removes every taint with `key` (and `effect`, when given), whatever its value; never adds one. */
export function removeNodeTaints(
  access: ClusterAccess,
  node: string,
  match: { readonly key: string; readonly effect?: Taint['effect'] },
  timeoutMs: number,
): Promise<ApiResult<'changed' | 'unchanged'>> {
  const matches = (existing: Taint) =>
    existing.key === match.key && (match.effect === undefined || existing.effect === match.effect);
  const edit: TaintEdit = (taints) =>
    taints.some(matches) ? taints.filter((existing) => !matches(existing)) : undefined;
  return editNodeTaints(access, node, edit, `${match.key}${match.effect ? `:${match.effect}` : ''}`, timeoutMs);
}
