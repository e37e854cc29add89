import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { DaemonSet, Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Namespace, Pod, ResourceQuota, ServiceAccount } from 'kubernetes-models/v1';
import {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';

type Plain = Record<string, unknown>;

/** Each kind `manifest` prints, checked against Kubernetes' own OpenAPI schema (kubernetes-models). */
const MODELS: Readonly<Record<string, (value: Plain) => { validate(): void }>> = {
  Namespace: (value) => new Namespace(value),
  ConfigMap: (value) => new ConfigMap(value),
  ServiceAccount: (value) => new ServiceAccount(value),
  Role: (value) => new Role(value as never),
  RoleBinding: (value) => new RoleBinding(value as never),
  ClusterRole: (value) => new ClusterRole(value),
  ClusterRoleBinding: (value) => new ClusterRoleBinding(value as never),
  DaemonSet: (value) => new DaemonSet(value as never),
  Deployment: (value) => new Deployment(value as never),
  Pod: (value) => new Pod(value),
  ResourceQuota: (value) => new ResourceQuota(value as never),
  ValidatingAdmissionPolicy: (value) => new ValidatingAdmissionPolicy(value as never),
  ValidatingAdmissionPolicyBinding: (value) => new ValidatingAdmissionPolicyBinding(value as never),
};

/** Every mode and option a user can combine (each switch on and off, each mesh). */
function combinations(): string[][] {
  const out: string[][] = [];
  const switches = ['--rules-check', '--report-event', '--native-sidecar'];
  for (const mesh of ['linkerd', 'istio', 'generic'])
    for (let mask = 0; mask < 1 << switches.length; mask++) {
      const on = switches.filter((_, index) => mask & (1 << index));
      const ports = mesh === 'generic' ? ['--inbound-port', '15006', '--outbound-port', '15001'] : [];
      out.push(['--mesh', mesh, ...ports, ...on], ['--mesh', mesh, ...ports, ...on, '--output', 'json']);
    }
  // OpenShift (issue #44): every mesh's validator and the agent's variants, as printed for it.
  for (const mesh of ['linkerd', 'istio', 'istio-ambient', 'kuma'])
    for (const extra of [[], ['--rules-check'], ['--report-event', '--output', 'json']])
      out.push(['--mesh', mesh, '--platform', 'openshift', ...extra]);
  for (const extra of [[], ['--cni-audit'], ['--recheck-interval', '30s', '--taint']])
    out.push(['--node-agent', '--mesh', 'istio-ambient', '--platform', 'openshift', ...extra]);
  for (const extra of [[], ['--namespace', 'shop'], ['--service-account', 'web,api'], ['--output', 'json']])
    out.push(['--rbac', ...extra]);
  for (const action of ['delete', 'label', 'none'])
    for (const extra of [
      [],
      ['--taint'],
      ['--cni-audit'],
      ['--cni-audit', '--runtime', 'crio', '--cni-bin-dir', '/a,/b'],
    ])
      out.push(
        ['--node-agent', '--mesh', 'istio', '--action', action, ...extra],
        // --mesh generic: the audit needs the mesh's plugin named, as the agent does.
        [
          '--node-agent',
          '--mesh',
          'generic',
          '--image-pull-secret',
          'regcred',
          '--action',
          action,
          ...extra,
          ...(extra.includes('--cni-audit') ? ['--mesh-plugin', 'cilium-cni'] : []),
          '--output',
          'json',
        ],
      );
  return out;
}

function objectsOf(stdout: string, json: boolean): Plain[] {
  if (json) {
    const value = JSON.parse(stdout) as Plain;
    return value.kind === 'List' ? (value.items as Plain[]) : [value];
  }
  return parseAllDocuments(stdout).map((doc) => doc.toJS() as Plain);
}

describe('every manifest mode and option combination passes the Kubernetes schema', () => {
  it('checks each printed object (a container snippet inside a Pod) with kubernetes-models', async () => {
    let checked = 0;
    for (const argv of combinations()) {
      const result = await runManifest(argv, {});
      expect(result.exitCode, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
      for (const object of objectsOf(result.stdout, argv.includes('json'))) {
        const value =
          typeof object.kind === 'string'
            ? object
            : {
                apiVersion: 'v1',
                kind: 'Pod',
                metadata: { name: 'p' },
                spec: { initContainers: [object], containers: [{ name: 'app', image: 'app' }] },
              };
        const model = MODELS[value.kind as string];
        expect(model, `${argv.join(' ')}: kind ${String(value.kind)}`).toBeDefined();
        expect(() => model!(value).validate(), argv.join(' ')).not.toThrow();
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('the schema check itself rejects a broken object (so a pass means something)', () => {
    expect(() => new Role({ metadata: { name: 'r' }, rules: [{ verbs: 'create' }] } as never).validate()).toThrow();
    expect(() => new DaemonSet({ metadata: { name: 'd' }, spec: { template: {} } } as never).validate()).toThrow();
  });
});
