import { meshInfrastructureNamespaces } from './meshes.js';

/**
 * cert-manager's namespace as its chart is documented to be installed (`helm install cert-manager
 * ... --namespace cert-manager`; pinned in test/fixtures/meshes/facts/infrastructure-namespaces.json):
 * it issues the webhook's own serving certificate.
 */
export const CERT_MANAGER_NAMESPACE = 'cert-manager';

/**
 * The namespaces a failurePolicy Fail webhook leaves out of its namespaceSelector by default
 * (kube-system and its own always are): while the webhook is down no selected pod starts, so it
 * must not select what would bring it back: cert-manager, the meshes' control planes and CNI plugins.
 */
export function failClosedExemptions(): readonly string[] {
  return [...new Set([CERT_MANAGER_NAMESPACE, ...meshInfrastructureNamespaces()])];
}
