import { interlockLabels } from '../kube/interlock-labels.js';

/**
 * What `validate --report-event` does to its Event, and nothing more: create it, and when the
 * same pod failed the same way before (409), get it and patch its count (src/kube/post-event.ts).
 */
const EVENT_VERBS = ['create', 'get', 'patch'] as const;

export interface EventRbacOptions {
  readonly namespace: string;
  /**
   * The pods' own ServiceAccounts (their mesh identity, which must not change): bound as they
   * are, never created. Empty: every ServiceAccount of the namespace, by its group.
   */
  readonly serviceAccounts: readonly string[];
}

/** A Role and a RoleBinding; no ServiceAccount, so applying them never replaces the app's own. */
export function eventRbacDocuments(options: EventRbacOptions): Array<Record<string, unknown>> {
  const metadata = {
    name: 'interlock-events',
    namespace: options.namespace,
    labels: interlockLabels('interlock', 'validator-events'),
  };
  const subjects =
    options.serviceAccounts.length > 0
      ? options.serviceAccounts.map((name) => ({ kind: 'ServiceAccount', name, namespace: options.namespace }))
      : [
          {
            kind: 'Group',
            apiGroup: 'rbac.authorization.k8s.io',
            name: `system:serviceaccounts:${options.namespace}`,
          },
        ];
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata,
      rules: [{ apiGroups: [''], resources: ['events'], verbs: [...EVENT_VERBS] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'interlock-events' },
      subjects,
    },
  ];
}
