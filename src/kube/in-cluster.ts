import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fail, ok, type Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';

/** The kubelet mounts the service account's credentials here in every pod that automounts them. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The in-cluster configuration, as client-go's rest.InClusterConfig builds it: the API server from
 * KUBERNETES_SERVICE_HOST/PORT (an IPv6 host is bracketed), the token and CA from the mounted
 * service account, and its namespace.
 */
export function inClusterAccess(
  env: Readonly<Record<string, string | undefined>>,
  dir = SERVICE_ACCOUNT_DIR,
): Result<ClusterAccess, 'KubeUnavailable'> {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    return fail(
      'KubeUnavailable',
      'no cluster: KUBECONFIG is not set and KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set (not running in a pod)',
    );
  }
  const token = readText(join(dir, 'token'));
  if (token === undefined)
    return fail(
      'KubeUnavailable',
      `no service account token at ${join(dir, 'token')} (automountServiceAccountToken false?)`,
    );
  const caData = readBytes(join(dir, 'ca.crt'));
  if (caData === undefined) return fail('KubeUnavailable', `no service account CA at ${join(dir, 'ca.crt')}`);
  const namespace = readText(join(dir, 'namespace'))?.trim();
  const bracketed = host.includes(':') ? `[${host}]` : host;
  return ok({
    server: `https://${bracketed}:${port}`,
    caData,
    token: token.trim(),
    insecureSkipTlsVerify: false,
    ...(namespace ? { namespace } : {}),
    origin: 'in-cluster service account',
  });
}

function readBytes(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  return readBytes(path)?.toString('utf8');
}
