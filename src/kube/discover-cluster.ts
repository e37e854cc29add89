import type { Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';
import { inClusterAccess, SERVICE_ACCOUNT_DIR } from './in-cluster.js';
import { kubeconfigAccess } from './kubeconfig.js';

/**
 * Finds the API server as the official client libraries do inside a pod: KUBECONFIG when it is
 * set (and non-empty), otherwise the in-cluster service account. `~/.kube/config` is deliberately
 * not consulted: a validator in a pod has no home, and a stray file there must not redirect it.
 */
export function discoverCluster(
  env: Readonly<Record<string, string | undefined>>,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): Result<ClusterAccess, 'KubeUnavailable'> {
  const kubeconfig = env.KUBECONFIG;
  if (kubeconfig) return kubeconfigAccess(kubeconfig);
  return inClusterAccess(env, serviceAccountDir);
}
