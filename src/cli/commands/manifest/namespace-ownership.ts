/**
 * Said above an output that creates its Namespace: `kubectl delete -f` of the output deletes the
 * Namespace, and the namespace controller then deletes everything in it, whoever created it.
 */
export function namespaceOwnership(namespace: string): string {
  return ` This output owns the Namespace ${namespace}: kubectl delete -f of it deletes ${namespace} and everything in it.`;
}
