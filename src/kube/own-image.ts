import { fail, ok, type Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';
import { call } from './pods-api.js';

/**
 * The image of one of this pod's own containers, as the API server holds it: what kustomize's
 * `images:`, `kubectl set image` or a Helm value last wrote into the Deployment or DaemonSet.
 * The pod is named by the downward API (POD_NAME, POD_NAMESPACE); the container by its name, or
 * the only one. Interlock's webhook and agent read it so that the image they inject or trust
 * follows their own without an argument left behind.
 */
export async function ownContainerImage(
  access: ClusterAccess,
  env: Readonly<Record<string, string | undefined>>,
  container: string,
  timeoutMs: number,
): Promise<Result<string, 'KubeUnavailable' | 'KubeApiError'>> {
  const name = env.POD_NAME;
  const namespace = env.POD_NAMESPACE;
  if (!name || !namespace)
    return fail('KubeUnavailable', 'POD_NAME and POD_NAMESPACE must come from the downward API to read this pod');
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
  const answer = await call(access, { method: 'GET', path, timeoutMs }, [200]);
  if (!answer.ok) return fail('KubeApiError', `cannot read this pod ${namespace}/${name}: ${answer.error.message}`);
  return imageOfContainer(answer.value.body, container, `${namespace}/${name}`);
}

/** The named container's image in a pod object, or the only container's. */
export function imageOfContainer(pod: unknown, container: string, podName: string): Result<string, 'KubeApiError'> {
  const containers = (pod as { spec?: { containers?: unknown } } | undefined)?.spec?.containers;
  const entries = Array.isArray(containers) ? (containers as { name?: unknown; image?: unknown }[]) : [];
  const chosen = entries.find((entry) => entry.name === container) ?? (entries.length === 1 ? entries[0] : undefined);
  if (typeof chosen?.image !== 'string' || chosen.image === '')
    return fail('KubeApiError', `pod ${podName} has no container ${container} with an image`);
  return ok(chosen.image);
}
