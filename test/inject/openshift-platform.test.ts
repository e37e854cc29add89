import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DaemonSet, Deployment } from 'kubernetes-models/apps/v1';
import { Pod } from 'kubernetes-models/v1';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import fastJsonPatch from 'fast-json-patch';
import { runManifest } from '../../src/cli/commands/manifest/run.js';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { podPatch } from '../../src/webhook/validator-patch.js';
import { ambientPatch } from '../../src/webhook/ambient-patch.js';
import { expectGolden } from '../harness/golden.js';
import { withoutFixedUid } from '../../src/inject/validator-container.js';

// Issue #44, item 7: OpenShift's restricted-v2 SCC refuses a fixed runAsUser outside the
// namespace's range (linkerd/linkerd2#11520), at admission and after the webhook's mutation
// too. With --platform openshift nothing Interlock prints or writes into a pod names a uid, and
// the node agent gets what Istio's chart gives istio-cni there (SELinux type spc_t, pinned in
// facts/openshift.json) and the privileged SCC by RBAC.
type Plain = Record<string, unknown>;
const fixture = (relative: string) => fileURLToPath(new URL(`../fixtures/${relative}`, import.meta.url));
const FACTS = JSON.parse(readFileSync(fixture('meshes/facts/openshift.json'), 'utf8')) as Plain[];
const SPC = FACTS.find((fact) => fact.fact === 'selinux-type')!.value as string;
const IMAGE = 'registry.example/mesh-interlock:1.0.0';

/** Every key path under `value` whose key is runAsUser or runAsGroup. */
function uidFields(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => uidFields(item, `${at}[${index}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    ...(key === 'runAsUser' || key === 'runAsGroup' ? [`${at}.${key}`] : []),
    ...uidFields(inner, `${at}.${key}`),
  ]);
}

const documents = (stdout: string): Plain[] => parseAllDocuments(stdout).map((doc) => doc.toJS() as Plain);
const inPod = (container: Plain): Plain => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { initContainers: [container], containers: [{ name: 'app', image: 'app' }] },
});
const golden = (name: string) => fixture(`golden/openshift/${name}`);

describe('manifest --platform openshift: the validator', () => {
  for (const mesh of ['linkerd', 'istio', 'istio-ambient', 'kuma']) {
    it(`${mesh}: no runAsUser or runAsGroup, the rest of restricted kept, valid in a Pod`, async () => {
      const result = await runManifest(['--mesh', mesh, '--image', IMAGE, '--platform', 'openshift'], {});
      expect(result.exitCode, result.stderr).toBe(0);
      const [container] = documents(result.stdout);
      expect(uidFields(container)).toEqual([]);
      expect(container!.securityContext).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(() => new Pod(inPod(container!)).validate()).not.toThrow();
      expectGolden(golden(`validator-${mesh}.yaml`), result.stdout);
    });
  }

  it('on kubernetes (the default) the validator keeps its fixed uid', async () => {
    const result = await runManifest(['--mesh', 'linkerd', '--image', IMAGE], {});
    expect(uidFields(documents(result.stdout)[0])).toEqual([
      '.securityContext.runAsUser',
      '.securityContext.runAsGroup',
    ]);
  });

  it('--rules-check keeps uid 0: only root gets effective capabilities from the kubelet', async () => {
    const argv = ['--mesh', 'istio-ambient', '--image', IMAGE, '--platform', 'openshift', '--rules-check'];
    const [container] = documents((await runManifest(argv, {})).stdout);
    expect(container!.securityContext).toMatchObject({
      runAsUser: 0,
      runAsNonRoot: false,
      capabilities: { drop: ['ALL'], add: ['NET_ADMIN', 'NET_RAW'] },
    });
  });

  it('refuses a platform it does not know', async () => {
    const result = await runManifest(['--mesh', 'linkerd', '--platform', 'okd'], {});
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain('kubernetes or openshift');
  });
});

describe('manifest --node-agent --platform openshift', () => {
  const argv = ['--node-agent', '--mesh', 'istio-ambient', '--image', IMAGE, '--platform', 'openshift'];

  it("runs the re-checking agent as spc_t (Istio's OpenShift profile) with the privileged SCC, schema-valid", async () => {
    const result = await runManifest([...argv, '--recheck-interval', '30s'], {});
    expect(result.exitCode, result.stderr).toBe(0);
    const objects = documents(result.stdout);
    const daemonSet = objects.find((object) => object.kind === 'DaemonSet')!;
    expect(() => new DaemonSet(daemonSet as never).validate()).not.toThrow();
    const [agent] = (daemonSet as { spec: { template: { spec: { containers: Plain[] } } } }).spec.template.spec
      .containers;
    expect(agent!.securityContext).toMatchObject({ seLinuxOptions: { type: SPC }, runAsUser: 0 });
    const role = objects.find((object) => object.kind === 'ClusterRole')!;
    expect(() => new ClusterRole(role).validate()).not.toThrow();
    expect(role.rules).toContainEqual({
      apiGroups: ['security.openshift.io'],
      resources: ['securitycontextconstraints'],
      resourceNames: ['privileged'],
      verbs: ['use'],
    });
    expectGolden(golden('node-agent-recheck.yaml'), result.stdout);
  });

  it('gives the agent without the re-check spc_t too (it reads the host CNI files), and kubernetes neither', async () => {
    const openshift = documents((await runManifest([...argv, '--cni-audit'], {})).stdout);
    const kubernetes = documents((await runManifest(argv.slice(0, -2), {})).stdout);
    const agentOf = (objects: Plain[]) => JSON.stringify(objects.find((object) => object.kind === 'DaemonSet'));
    expect(agentOf(openshift)).toContain(`"seLinuxOptions":{"type":"${SPC}"}`);
    expect(agentOf(kubernetes)).not.toContain('seLinuxOptions');
    expect(JSON.stringify(kubernetes)).not.toContain('security.openshift.io');
  });
});

describe('manifest --webhook --platform openshift', () => {
  it('prints a webhook without a uid that writes validators without one', async () => {
    const argv = ['--webhook', '--mesh', 'istio-ambient', '--image', IMAGE, '--platform', 'openshift'];
    const result = await runManifest(argv, {});
    expect(result.exitCode, result.stderr).toBe(0);
    const deployment = documents(result.stdout).find((object) => object.kind === 'Deployment')!;
    expect(() => new Deployment(deployment as never).validate()).not.toThrow();
    expect(uidFields(deployment)).toEqual([]);
    expect(JSON.stringify(deployment)).toContain('"--platform=openshift"');
    expectGolden(golden('webhook.yaml'), result.stdout);
  });
});

const LINKERD_POD = fixture('meshes/linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml');
const validatorOf = (pod: Plain, name: string) =>
  ((pod.spec as Plain).initContainers as Plain[]).find((container) => container.name === name)!;

describe("inject and the webhook on OpenShift: a mesh validator's fixed uid goes", () => {
  it("inject --platform openshift removes Linkerd's 65534 from linkerd-network-validator", async () => {
    const run = (platform: string) => runInject(['-f', LINKERD_POD, '--image', IMAGE, '--platform', platform], {});
    const openshift = await run('openshift');
    expect(openshift.exitCode, openshift.stderr).toBe(0);
    const deployment = documents(openshift.stdout)[0] as { spec: { template: Plain } };
    expect(uidFields(validatorOf(deployment.spec.template, 'linkerd-network-validator'))).toEqual([]);
    const kubernetes = documents((await run('kubernetes')).stdout)[0] as { spec: { template: Plain } };
    expect(uidFields(validatorOf(kubernetes.spec.template, 'linkerd-network-validator'))).not.toEqual([]);
  });

  it('inject --mesh istio-ambient --platform openshift adds a validator without a uid', async () => {
    const pod = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', labels: { 'istio.io/dataplane-mode': 'ambient' } },
      spec: { containers: [{ name: 'app', image: 'app' }] },
    });
    const run = (platform: string) =>
      runInject(['--mesh', 'istio-ambient', '--image', IMAGE, '--platform', platform], {}, () => Buffer.from(pod));
    const openshift = await run('openshift');
    expect(openshift.exitCode, openshift.stderr).toBe(0);
    const injected = JSON.parse(openshift.stdout) as Plain;
    expect(validatorOf(injected, 'istio-ambient-validation')).toBeDefined();
    expect(uidFields(injected)).toEqual([]);
    expect(uidFields(JSON.parse((await run('kubernetes')).stdout))).not.toEqual([]);
  });

  it("the webhook's patch of Linkerd's validator leaves no uid, and the patched pod is valid", () => {
    const deployment = documents(readFileSync(LINKERD_POD, 'utf8'))[0] as { spec: { template: Plain } };
    const pod = { apiVersion: 'v1', kind: 'Pod', ...deployment.spec.template } as Plain;
    (pod.metadata as Plain).name = 'web';
    const patch = podPatch(pod, { image: IMAGE, annotations: {}, platform: 'openshift' });
    expect(patch.containers.map((decision) => decision.outcome)).toEqual(['patched']);
    const patched = fastJsonPatch.applyPatch(structuredClone(pod), patch.ops as fastJsonPatch.Operation[])
      .newDocument as Plain;
    expect(uidFields(validatorOf(patched, 'linkerd-network-validator'))).toEqual([]);
    expect(() => new Pod(patched).validate()).not.toThrow();
    const plain = podPatch(pod, { image: IMAGE, annotations: {} });
    expect(JSON.stringify(plain.ops)).not.toContain('securityContext');
  });

  it("the ambient patch's validator has no uid on OpenShift", () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', labels: { 'istio.io/dataplane-mode': 'ambient' } },
      spec: { containers: [{ name: 'app', image: 'app' }] },
    };
    const patch = ambientPatch(pod, { image: IMAGE, annotations: {}, platform: 'openshift' });
    const patched = fastJsonPatch.applyPatch(structuredClone(pod), patch.ops as fastJsonPatch.Operation[])
      .newDocument as Plain;
    expect(uidFields(patched)).toEqual([]);
    expect(JSON.stringify(ambientPatch(pod, { image: IMAGE, annotations: {} }).ops)).toContain('runAsUser');
  });
});

describe('withoutFixedUid', () => {
  it("removes only the mesh's fixed validator uid, only on OpenShift; a range uid and odd values stay", () => {
    const linkerd = { runAsUser: 65534, runAsGroup: 65534, runAsNonRoot: true };
    expect(withoutFixedUid(linkerd, 'linkerd', 'openshift')).toEqual({ runAsNonRoot: true });
    expect(withoutFixedUid(linkerd, 'linkerd', 'kubernetes')).toBe(linkerd);
    const ranged = { runAsUser: 1000680000, runAsGroup: 1000680000 };
    expect(withoutFixedUid(ranged, 'istio', 'openshift')).toBe(ranged);
    expect(withoutFixedUid({ runAsUser: 1337 }, 'istio', 'openshift')).toEqual({});
    for (const odd of [undefined, null, 'x']) expect(withoutFixedUid(odd, 'linkerd', 'openshift')).toBe(odd);
  });

  it('the webhook on kubernetes keeps its fixed uid 65532', async () => {
    const result = await runManifest(['--webhook', '--mesh', 'istio-ambient', '--image', IMAGE], {});
    const deployment = documents(result.stdout).find((object) => object.kind === 'Deployment')!;
    expect(uidFields(deployment).length).toBe(2);
    expect(JSON.stringify(deployment)).toContain('"runAsUser":65532');
  });
});
