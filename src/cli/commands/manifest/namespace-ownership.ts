import { controlPlaneNamespaces } from '../../../mesh/meshes.js';

/** Namespaces of others that Interlock never prints as its own (beside every kube-*): Kubernetes' default and cert-manager's. */
const OTHERS = ['default', 'cert-manager'];

/** Every namespace refused by name (kube-* is refused by its prefix), for the chart's own check. */
export function namedForeignNamespaces(): string[] {
  return [...new Set([...OTHERS, ...controlPlaneNamespaces()])];
}

/**
 * Why `--namespace NS` cannot be an output's own: the output prints the Namespace, so kubectl apply
 * relabels it (the node agent's PodSecurity privileged) and kubectl delete -f deletes it with all
 * inside. Undefined for a namespace Interlock may own.
 */
export function foreignNamespace(namespace: string): string | undefined {
  const whose = namespace.startsWith('kube-')
    ? "Kubernetes'"
    : controlPlaneNamespaces().includes(namespace)
      ? "a mesh's control plane's"
      : OTHERS.includes(namespace)
        ? "not Interlock's"
        : undefined;
  if (whose === undefined) return undefined;
  return `--namespace ${namespace} is ${whose}: the output prints its Namespace, so kubectl apply would relabel it and kubectl delete -f would delete it with everything in it; give the part a namespace of its own (the default, or a new name)`;
}

/**
 * Said above an output that creates its Namespace: `kubectl delete -f` of the output deletes the
 * Namespace, and the namespace controller then deletes everything in it, whoever created it.
 */
export function namespaceOwnership(namespace: string): string {
  return ` This output owns the Namespace ${namespace}: kubectl delete -f of it deletes ${namespace} and everything in it.`;
}
