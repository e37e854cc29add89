/**
 * What `validate --report-event` needs to post its Event: create on core/v1 events in the pod's
 * namespace, nothing else. A container cannot have its own service account, so the binding is for
 * the account the pod runs as; the manifest creates one the pod can name.
 */
export interface EventRbacOptions {
  readonly namespace: string;
  readonly serviceAccount: string;
}

export function eventRbacDocuments(options: EventRbacOptions): Array<Record<string, unknown>> {
  const metadata = (name: string) => ({
    name,
    namespace: options.namespace,
    labels: { 'app.kubernetes.io/name': 'interlock' },
  });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(options.serviceAccount) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: metadata('interlock-events'),
      rules: [{ apiGroups: [''], resources: ['events'], verbs: ['create'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: metadata('interlock-events'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'interlock-events' },
      subjects: [{ kind: 'ServiceAccount', name: options.serviceAccount, namespace: options.namespace }],
    },
  ];
}
