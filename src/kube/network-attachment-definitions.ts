import type { ClusterAccess } from './cluster-access.js';
import { call, type ApiResult } from './pods-api.js';

/** A NetworkAttachmentDefinition as the audit reads it: `spec.config`, empty when unset. */
export interface NetworkAttachmentDefinition {
  readonly namespace: string;
  readonly name: string;
  readonly config: string;
}

/**
 * GET one NetworkAttachmentDefinition (`k8s.cni.cncf.io/v1`, resource
 * `network-attachment-definitions`): undefined when the API answers 404 (no such object, or the
 * CRD is not installed), a failure for any other answer.
 */
export async function getNetworkAttachmentDefinition(
  access: ClusterAccess,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<ApiResult<NetworkAttachmentDefinition | undefined>> {
  const path = `/apis/k8s.cni.cncf.io/v1/namespaces/${encodeURIComponent(namespace)}/network-attachment-definitions/${encodeURIComponent(name)}`;
  const answer = await call(access, { method: 'GET', path, timeoutMs }, [200, 404]);
  if (!answer.ok) return answer;
  if (answer.value.status === 404) return { ok: true, value: undefined };
  const spec = (answer.value.body as { spec?: { config?: unknown } } | undefined)?.spec;
  const config = spec?.config;
  if (config !== undefined && typeof config !== 'string')
    return {
      ok: false,
      error: { status: 200, retryAfterSeconds: undefined, message: `GET ${path}: spec.config is not a string` },
    };
  return { ok: true, value: { namespace, name, config: config ?? '' } };
}
