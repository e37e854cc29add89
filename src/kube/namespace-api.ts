import type { ClusterAccess } from './cluster-access.js';
import { call, type ApiResult } from './pods-api.js';

/** One Namespace object (its labels and annotations are what callers read). */
export async function getNamespace(
  access: ClusterAccess,
  name: string,
  timeoutMs: number,
): Promise<ApiResult<unknown>> {
  const answer = await call(
    access,
    { method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(name)}`, timeoutMs },
    [200],
  );
  return answer.ok ? { ok: true, value: answer.value.body } : answer;
}
