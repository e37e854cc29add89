import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { auditCni } from '../../src/cni/audit-cni.js';
import type { AttachmentDefinition, DefinitionRead } from '../../src/cni/attachment-definition.js';
import { attachmentPodOf, type AttachmentPod } from '../../src/cni/attachment-pod.js';
import type { CniAuditInput } from '../../src/cni/cni-audit-input.js';
import type { MultusApiReader, MultusApiView } from '../../src/cni/multus-api-view.js';
import { readMultusApi } from '../../src/cni/read-multus-api.js';
import { conflist, fixture, inventory, listing } from './listing.js';

/**
 * The audit over what the node agent reads from the API for Multus, pure: upstream's files
 * (Multus v4.3.0's thin and thick confs, Istio 1.30.3's OpenShift conf and rendered
 * NetworkAttachmentDefinition, Kuma v2.14.3's chart conf and its controller's definition) and
 * the annotation values the injectors' goldens carry (test/fixtures/cni/nad/sources.json).
 */
const layout = (path: string) => readFileSync(new URL(`../fixtures/cni/layouts/${path}`, import.meta.url), 'utf8');
const THIN = 'multus/v4.3.0/70-multus.conf';
const SHIM = 'multus/v4.3.0/00-multus.conf';
const ISTIO_CNI = layout('istio/1.30.3/istio-cni.conf');
const KUMA_CNI = layout('kuma/2.14.3/kuma-cni.conf');
const MULTUS_DIR = '/etc/cni/multus/net.d';

/** Istio's rendered definition: default/istio-cni with no spec at all. */
const ISTIO_NAD = ((): AttachmentDefinition => {
  const text = readFileSync(new URL('../fixtures/cni/nad/istio-cni-nad.yaml', import.meta.url), 'utf8');
  const object = parse(text) as { metadata: { name: string; namespace: string }; spec?: { config?: string } };
  return { namespace: object.metadata.namespace, name: object.metadata.name, config: object.spec?.config ?? '' };
})();
const KUMA = JSON.parse(readFileSync(new URL('../fixtures/cni/nad/kuma-nad.json', import.meta.url), 'utf8')) as {
  name: string;
  annotation: string;
};

const found = (definition: AttachmentDefinition): DefinitionRead => ({ state: 'found', definition });
const view = (definitions: Record<string, DefinitionRead>, pods?: readonly AttachmentPod[]): MultusApiView => ({
  definitions: new Map(Object.entries(definitions)),
  ...(pods ? { pods: { ok: true as const, pods } } : {}),
});
const withKeys = (path: string, keys: Record<string, unknown>) =>
  JSON.stringify({ ...(JSON.parse(layout(path)) as object), ...keys });

const PLUGINS = ['calico', 'calico-ipam', 'portmap', 'bandwidth', 'flannel', 'multus', 'multus-shim'];
function audit(input: Partial<CniAuditInput> & Pick<CniAuditInput, 'listing'>, meshPlugin = 'linkerd-cni') {
  return auditCni({
    runtime: 'containerd',
    meshPlugin,
    binDirs: ['/opt/cni/bin'],
    inventory: inventory([...PLUGINS, meshPlugin]),
    ...input,
  });
}
const codes = (verdict: ReturnType<typeof audit>) =>
  verdict.findings.map((finding) => `${finding.severity}:${finding.code}`);

describe("Multus's clusterNetwork naming a NetworkAttachmentDefinition", () => {
  const thin = listing({
    '70-multus.conf': withKeys(THIN, { clusterNetwork: 'k8s-pod-network', delegates: undefined }),
  });
  const inline = (types: readonly string[]): AttachmentDefinition => ({
    namespace: 'kube-system',
    name: 'k8s-pod-network',
    config: conflist('k8s-pod-network', types),
  });

  it('without the API (cni-check offline) the definition is not visible: MultusDelegateMissing, as before', () => {
    const verdict = audit({ listing: thin });
    expect(codes(verdict)).toEqual(['error:MultusDelegateMissing']);
    expect(verdict.findings[0]?.message).toContain('not visible from the node');
  });

  it("read in Multus's default multusNamespace kube-system: its spec.config chain is the pod's primary network", () => {
    const healthy = audit({
      listing: thin,
      multusApi: view({ 'kube-system/k8s-pod-network': found(inline(['calico', 'portmap', 'linkerd-cni'])) }),
    });
    expect(codes(healthy)).toEqual([]);
    expect(healthy).toMatchObject({
      healthy: true,
      delegate: {
        file: 'NetworkAttachmentDefinition kube-system/k8s-pod-network (spec.config)',
        chain: ['calico', 'portmap', 'linkerd-cni'],
      },
    });
    const broken = audit({
      listing: thin,
      multusApi: view({ 'kube-system/k8s-pod-network': found(inline(['calico', 'portmap'])) }),
    });
    expect(codes(broken)).toEqual(['error:MeshMissing']);
    expect(broken.findings[0]?.message).toContain('NetworkAttachmentDefinition kube-system/k8s-pod-network');
  });

  it('the definition missing and no file of that network: MultusDelegateMissing names namespace/name', () => {
    const verdict = audit({ listing: thin, multusApi: view({ 'kube-system/k8s-pod-network': { state: 'absent' } }) });
    expect(codes(verdict)).toEqual(['error:MultusDelegateMissing']);
    expect(verdict.findings[0]).toMatchObject({ file: 'kube-system/k8s-pod-network' });
    expect(verdict.findings[0]?.message).toContain('no NetworkAttachmentDefinition kube-system/k8s-pod-network exists');
  });

  it("the conf's multusNamespace moves the lookup; a definition elsewhere does not count", () => {
    const moved = listing({
      '70-multus.conf': withKeys(THIN, {
        clusterNetwork: 'k8s-pod-network',
        delegates: undefined,
        multusNamespace: 'multus',
      }),
    });
    const elsewhere = audit({
      listing: moved,
      multusApi: view({ 'kube-system/k8s-pod-network': found(inline(['calico', 'linkerd-cni'])) }),
    });
    expect(codes(elsewhere)).toEqual(['error:MultusDelegateMissing']);
    const there = audit({
      listing: moved,
      multusApi: view({
        'multus/k8s-pod-network': found({ ...inline(['calico', 'linkerd-cni']), namespace: 'multus' }),
      }),
    });
    expect(codes(there)).toEqual([]);
  });

  it("an empty spec.config is the file of that network name in Multus's confDir", () => {
    const empty = view({ 'kube-system/k8s-pod-network': found({ ...inline([]), config: '' }) });
    const multus = (text: string) => listing({ '10-calico.conflist': text }, MULTUS_DIR);
    const healthy = audit({
      listing: thin,
      multusApi: empty,
      multusListing: multus(fixture('10-calico-linkerd.conflist')),
    });
    expect(healthy).toMatchObject({ healthy: true, delegate: { file: `${MULTUS_DIR}/10-calico.conflist` } });
    const broken = audit({ listing: thin, multusApi: empty, multusListing: multus(fixture('10-calico.conflist')) });
    expect(codes(broken)).toEqual(['error:MeshMissing']);
    const none = audit({ listing: thin, multusApi: empty, multusListing: listing({}, MULTUS_DIR) });
    expect(codes(none)).toEqual(['error:MultusDelegateMissing']);
    expect(none.findings[0]?.message).toContain('has an empty spec.config, and no file of /etc/cni/multus/net.d');
  });

  it('a clusterNetwork with a "/" is a path, never namespace/name (getNetDelegate)', () => {
    const verdict = audit({
      listing: listing({ '00-multus.conf': layout(SHIM), '10-calico.conflist': fixture('10-calico-linkerd.conflist') }),
      multusApi: view({}),
    });
    expect(verdict).toMatchObject({ healthy: true, delegate: { file: '10-calico.conflist' } });
  });
});

describe('a non-chained mesh plugin, judged as the attachment each meshed pod requests', () => {
  const istioNode = (pods: readonly AttachmentPod[], definitions: Record<string, DefinitionRead>) =>
    audit(
      {
        listing: listing({ '00-multus.conf': layout(SHIM), '10-calico.conflist': fixture('10-calico.conflist') }),
        multusListing: listing({ 'istio-cni.conf': ISTIO_CNI }, MULTUS_DIR),
        multusApi: view(definitions, pods),
      },
      'istio-cni',
    );
  const pod = (networks: string | undefined, namespace = 'app'): AttachmentPod => ({
    namespace,
    name: 'web-0',
    networks,
  });
  const ISTIO = { 'default/istio-cni': found(ISTIO_NAD) };

  it("Istio's injected annotation default/istio-cni and its rendered definition (no spec): healthy", () => {
    expect(ISTIO_NAD).toEqual({ namespace: 'default', name: 'istio-cni', config: '' });
    const verdict = istioNode([pod('default/istio-cni')], ISTIO);
    expect(codes(verdict)).toEqual([]);
    expect(verdict.attachment).toBe(`${MULTUS_DIR}/istio-cni.conf`);
  });

  it("Istio's JSON golden (three attachments, one of them istio-cni): healthy", () => {
    const json =
      '[{"name": "alt_cni"}, {"name": "more_cni", "namespace": "kube-system"}, {"name": "istio-cni", "namespace": "default"}]';
    const verdict = istioNode([pod(json)], { ...ISTIO, 'app/alt_cni': { state: 'absent' } });
    expect(codes(verdict)).toEqual([]);
  });

  it('a meshed pod without the annotation: PodAttachmentMissing names the pod and the annotation, never MeshFirst', () => {
    const verdict = istioNode([pod(undefined)], ISTIO);
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing']);
    expect(verdict.healthy).toBe(false);
    expect(verdict.findings[0]?.message).toContain(
      'meshed pod app/web-0 has no k8s.v1.cni.cncf.io/networks annotation requesting istio-cni',
    );
  });

  it('the definition the pod names is missing: PodAttachmentMissing names it', () => {
    const verdict = istioNode([pod('default/istio-cni')], { 'default/istio-cni': { state: 'absent' } });
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing']);
    expect(verdict.findings[0]?.message).toContain('NetworkAttachmentDefinition default/istio-cni does not exist');
    expect(verdict.findings[0]?.message).toContain('k8s.v1.cni.cncf.io/networks: "default/istio-cni"');
  });

  it('the definition carries no istio-cni: PodAttachmentMissing shows its chain', () => {
    const other = { ...ISTIO_NAD, config: conflist('istio-cni', ['macvlan']) };
    const verdict = istioNode([pod('default/istio-cni')], { 'default/istio-cni': found(other) });
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing']);
    expect(verdict.findings[0]?.message).toContain('whose chain [macvlan] has no istio-cni');
  });

  it("Istio's flat golden with alt_cni: Multus refuses the whole value, so the pod gets no istio-cni", () => {
    const verdict = istioNode([pod('alt_cni, default/istio-cni')], ISTIO);
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing']);
    expect(verdict.findings[0]?.message).toContain('which Multus refuses');
  });

  it('pods that cannot be listed: a warning, the node stays healthy on what it knows', () => {
    const verdict = audit(
      {
        listing: listing({ '00-multus.conf': layout(SHIM), '10-calico.conflist': fixture('10-calico.conflist') }),
        multusListing: listing({ 'istio-cni.conf': ISTIO_CNI }, MULTUS_DIR),
        multusApi: { definitions: new Map(), pods: { ok: false, message: 'GET /api/v1/pods answered 403' } },
      },
      'istio-cni',
    );
    expect(codes(verdict)).toEqual(['warning:AttachmentUnread']);
  });

  it("Kuma's layout: kuma-cni in the pod's own namespace, the controller's definition with no spec", () => {
    const kumaNode = (definitions: Record<string, DefinitionRead>, networks: string | null = KUMA.annotation) =>
      audit(
        {
          listing: listing({ '10-calico.conflist': fixture('10-calico.conflist') }),
          multusListing: listing({ 'kuma-cni.conf': KUMA_CNI }, MULTUS_DIR),
          multusApi: view(definitions, [pod(networks ?? undefined, 'shop')]),
        },
        'kuma-cni',
      );
    const definition = { namespace: 'shop', name: KUMA.name, config: '' };
    expect(codes(kumaNode({ 'shop/kuma-cni': found(definition) }))).toEqual([]);
    expect(codes(kumaNode({ 'shop/kuma-cni': { state: 'absent' } }))).toEqual(['error:PodAttachmentMissing']);
    expect(codes(kumaNode({ 'shop/kuma-cni': found(definition) }, null))).toEqual(['error:PodAttachmentMissing']);
  });
});

describe('the API reads one audit makes', () => {
  const reader = (pods: readonly unknown[]) => {
    const asked: string[] = [];
    let listed = 0;
    const api: MultusApiReader = {
      definition: (namespace, name) => {
        asked.push(JSON.stringify([namespace, name]));
        return Promise.resolve({ state: 'absent' });
      },
      podsOnNode: () => {
        listed++;
        return Promise.resolve({ ok: true, pods });
      },
    };
    return { api, asked, listed: () => listed };
  };
  const istioPod = (name: string, annotations: Record<string, string>) => ({
    metadata: { name, namespace: 'app', annotations },
    spec: { initContainers: [{ name: 'istio-validation' }], containers: [{ name: 'app' }, { name: 'istio-proxy' }] },
    status: { phase: 'Running' },
  });

  it("no attachment in Multus's directory: the clusterNetwork definition, and one pod list (default-network)", async () => {
    const { api, asked, listed } = reader([]);
    const thin = listing({ '70-multus.conf': withKeys(THIN, { clusterNetwork: 'k8s-pod-network' }) });
    await readMultusApi(api, thin, undefined, 'linkerd-cni', '1.1');
    expect(asked).toEqual(['["kube-system","k8s-pod-network"]']);
    expect(listed()).toBe(1);
  });

  it('with the attachment: the meshed pods, and each definition their annotations name', async () => {
    const plain = {
      metadata: { name: 'db', namespace: 'app', annotations: {} },
      spec: { containers: [{ name: 'db' }] },
    };
    const { api, asked, listed } = reader([
      istioPod('web', { 'k8s.v1.cni.cncf.io/networks': 'default/istio-cni' }),
      istioPod('api', { 'k8s.v1.cni.cncf.io/networks': 'extra@net2, default/istio-cni' }),
      // The JSON form checks no name: one with a "/" is asked for as it is, never split.
      istioPod('odd', { 'k8s.v1.cni.cncf.io/networks': '[{"name": "a/b"}]' }),
      plain,
    ]);
    const result = await readMultusApi(
      api,
      listing({ '10-calico.conflist': fixture('10-calico.conflist') }),
      listing({ 'istio-cni.conf': ISTIO_CNI }, MULTUS_DIR),
      'istio-cni',
      '1.1',
    );
    expect(listed()).toBe(1);
    expect(asked.sort()).toEqual(['["app","a/b"]', '["app","extra"]', '["default","istio-cni"]']);
    expect(result.pods).toEqual({
      ok: true,
      pods: [
        { namespace: 'app', name: 'web', networks: 'default/istio-cni' },
        { namespace: 'app', name: 'api', networks: 'extra@net2, default/istio-cni' },
        { namespace: 'app', name: 'odd', networks: '[{"name": "a/b"}]' },
      ],
    });
  });

  it('a meshed pod is known by its containers or its injector annotation; finished, host-network and self-capturing (istio-init) pods are not', () => {
    expect(attachmentPodOf(istioPod('web', {}), 'istio-cni')).toMatchObject({ name: 'web', networks: undefined });
    expect(attachmentPodOf(istioPod('web', {}), 'kuma-cni')).toBeUndefined();
    const kuma = {
      metadata: { name: 'k', namespace: 's', annotations: { 'kuma.io/sidecar-injected': 'true' } },
      spec: {},
    };
    expect(attachmentPodOf(kuma, 'kuma-cni')).toMatchObject({ name: 'k' });
    expect(attachmentPodOf({ ...istioPod('done', {}), status: { phase: 'Succeeded' } }, 'istio-cni')).toBeUndefined();
    const own = istioPod('own', {});
    const withInit = { ...own, spec: { ...own.spec, initContainers: [{ name: 'istio-init' }] } };
    expect(attachmentPodOf(withInit, 'istio-cni')).toBeUndefined();
    const host = istioPod('h', {});
    expect(attachmentPodOf({ ...host, spec: { ...host.spec, hostNetwork: true } }, 'istio-cni')).toBeUndefined();
  });
});
