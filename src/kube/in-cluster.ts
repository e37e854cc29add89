import { join } from 'node:path';
import { fail, ok, type Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';
import { readCredentialFile } from './credential-file.js';

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
  const token = readCredentialFile('the service account token', join(dir, 'token'));
  if (!token.ok)
    return token.missing
      ? fail(
          'KubeUnavailable',
          `no service account token at ${join(dir, 'token')} (automountServiceAccountToken false?)`,
        )
      : token;
  const caData = readCredentialFile('the service account CA', join(dir, 'ca.crt'));
  if (!caData.ok)
    return caData.missing ? fail('KubeUnavailable', `no service account CA at ${join(dir, 'ca.crt')}`) : caData;
  const namespaceFile = readCredentialFile('the service account namespace', join(dir, 'namespace'));
  const namespace = namespaceFile.ok ? namespaceFile.value.toString('utf8').trim() : undefined;
  const bracketed = host.includes(':') ? `[${host}]` : host;
  return ok({
    server: `https://${bracketed}:${port}`,
    caData: caData.value,
    token: token.value.toString('utf8').trim(),
    insecureSkipTlsVerify: false,
    ...(namespace ? { namespace } : {}),
    origin: 'in-cluster service account',
  });
}
