import type { NodeAction } from './node-action.js';

/** The token claim the API server binds into a pod's service account token: the pod's node. */
const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';

/**
 * RBAC cannot scope pods to a node, so the agent's ClusterRole alone lets every node's agent delete
 * (or patch) any pod of the cluster. This policy keeps each agent to its own node's pods at the API
 * server: a pod-bound service account token carries its pod's node name as a user extra
 * (KEP-4193, ServiceAccountTokenPodNodeInfo, on by default from 1.30, the release that made
 * ValidatingAdmissionPolicy GA), and a write is allowed only when the pod's `spec.nodeName` is
 * that node. A token without the extra (an older API server, a long-lived Secret token) is
 * denied: fail closed. Undefined for `none`, which writes no pod.
 */
export function nodeScopePolicy(
  action: NodeAction,
  serviceAccount: { readonly name: string; readonly namespace: string },
  labels: Readonly<Record<string, string>>,
): readonly object[] {
  if (action === 'none') return [];
  const name = `${serviceAccount.name}-own-node-pods`;
  const operation = action === 'delete' ? 'DELETE' : 'UPDATE';
  const nodes = `request.userInfo.extra['${NODE_NAME_EXTRA}']`;
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: [operation] }],
      },
      matchConditions: [
        {
          name: 'interlock-node-agent',
          expression: `request.userInfo.username == 'system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}'`,
        },
      ],
      validations: [
        {
          expression:
            `has(request.userInfo.extra) && '${NODE_NAME_EXTRA}' in request.userInfo.extra && ` +
            `has(oldObject.spec.nodeName) && oldObject.spec.nodeName in ${nodes}`,
          message: `the Interlock node agent may ${action} only pods on its own node (the node its service account token is bound to)`,
          reason: 'Forbidden',
        },
      ],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
  return [policy, binding];
}
