import { describe, expect, it } from 'vitest';
import { nodeAgentManifest, nodeAgentRules } from '../../src/node-agent/manifest.js';

/** What this test reads of the documents (the Kubernetes fields, as nodeAgentManifest writes them). */
type ManifestDocument = {
  kind: string;
  subjects?: unknown[];
  spec: {
    template: {
      spec: { hostNetwork: boolean; tolerations: unknown[]; containers: Array<{ args: string[]; env: unknown[] }> };
    };
  };
};

const verbsOf = (rules: ReturnType<typeof nodeAgentRules>) =>
  Object.fromEntries(rules.map((rule) => [rule.resources.join(','), rule.verbs]));

describe('node agent manifests', () => {
  it('grants each action exactly the rights of the table', () => {
    expect(verbsOf(nodeAgentRules('none', false))).toEqual({ pods: ['get', 'list', 'watch'], events: ['create'] });
    expect(verbsOf(nodeAgentRules('delete', false))).toEqual({
      pods: ['get', 'list', 'watch', 'delete'],
      events: ['create'],
    });
    expect(verbsOf(nodeAgentRules('label', false))).toEqual({
      pods: ['get', 'list', 'watch', 'patch'],
      events: ['create'],
    });
    expect(verbsOf(nodeAgentRules('delete', true))).toEqual({
      pods: ['get', 'list', 'watch', 'delete'],
      events: ['create'],
      nodes: ['get', 'patch'],
    });
  });

  it('prints a Namespace, ServiceAccount, ClusterRole, binding and a host-network DaemonSet that tolerates its own taint', () => {
    const documents = nodeAgentManifest({
      image: 'example/interlock:1',
      mesh: 'linkerd',
      action: 'label',
      taint: true,
    }) as readonly ManifestDocument[];
    expect(documents.map((document) => document.kind)).toEqual([
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'ResourceQuota',
      'DaemonSet',
    ]);
    const pod = documents[7]!.spec.template.spec;
    expect(pod.hostNetwork).toBe(true);
    expect(pod.tolerations).toContainEqual({
      key: 'interlock.dev/cni-not-ready',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
    expect(pod.containers[0]?.args).toEqual([
      'node',
      '--mesh=linkerd',
      '--action=label',
      '--taint',
      '--listen=0.0.0.0:9477',
    ]);
    expect(pod.containers[0]?.env).toContainEqual({
      name: 'NODE_NAME',
      valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } },
    });
    expect(documents[3]?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'interlock-node', namespace: 'interlock-system' },
    ]);
  });
});
