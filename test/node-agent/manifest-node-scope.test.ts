import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../src/cli/commands/manifest/run.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
async function printed(args: string[]): Promise<Doc[]> {
  const outcome = await runManifest(['--node-agent', '--mesh', 'linkerd', ...args], {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc);
}

// RBAC cannot scope pods to a node: the agent's ClusterRole lets every node's agent delete (or
// patch) any pod of the cluster. The API server keeps each agent to its own node's pods by the node
// name it binds into the agent's service account token (KEP-4193, ServiceAccountTokenPodNodeInfo,
// beta and on by default from 1.30): `request.userInfo.extra['authentication.kubernetes.io/node-name']`.
describe('manifest --node-agent keeps each agent to its own node’s pods at the API', () => {
  for (const [action, operations] of [
    ['delete', ['DELETE']],
    ['label', ['UPDATE']],
  ] as const)
    it(`--action ${action}: a ValidatingAdmissionPolicy and its binding deny ${operations.join()} of another node's pod`, async () => {
      const docs = await printed(['--action', action, '--namespace', 'ops']);
      const policy = docs.find((doc) => doc.kind === 'ValidatingAdmissionPolicy')!;
      const binding = docs.find((doc) => doc.kind === 'ValidatingAdmissionPolicyBinding')!;
      expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
      expect(policy.spec.failurePolicy).toBe('Fail');
      expect(policy.spec.matchConstraints.resourceRules).toEqual([
        { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations },
      ]);
      expect(policy.spec.matchConditions).toEqual([
        {
          name: 'interlock-node-agent',
          expression: "request.userInfo.username == 'system:serviceaccount:ops:interlock-node-linkerd'",
        },
      ]);
      const expression = policy.spec.validations.map((rule: Doc) => rule.expression).join(' ');
      expect(expression).toContain("request.userInfo.extra['authentication.kubernetes.io/node-name']");
      expect(expression).toContain('oldObject.spec.nodeName');
      expect(binding.apiVersion).toBe('admissionregistration.k8s.io/v1');
      expect(binding.spec).toEqual({ policyName: policy.metadata.name, validationActions: ['Deny'] });
    });

  it('--action none writes no pod, so it prints no policy', async () => {
    const docs = await printed(['--action', 'none']);
    expect(docs.filter((doc) => /AdmissionPolicy/.test(String(doc.kind)))).toEqual([]);
  });
});
