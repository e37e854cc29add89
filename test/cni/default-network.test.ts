import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditCni } from '../../src/cni/audit-cni.js';
import { defaultNetworkFindings } from '../../src/cni/default-network-findings.js';
import type { AttachmentDefinition, DefinitionRead } from '../../src/cni/attachment-definition.js';
import { attachmentPodOf, type AttachmentPod } from '../../src/cni/attachment-pod.js';
import type { CniAuditInput } from '../../src/cni/cni-audit-input.js';
import type { MultusApiReader, MultusApiView } from '../../src/cni/multus-api-view.js';
import { readMultusApi } from '../../src/cni/read-multus-api.js';
import { conflist, fixture, inventory, listing } from './listing.js';

/**
 * A pod's `v1.multus-cni.io/default-network` replaces its primary network with the definition it
 * names (multus-cni v4.2.2 pkg/k8sclient/k8sclient.go tryLoadK8sPodDefaultNetwork), looked up in
 * multusNamespace when the value names no namespace. The values are the examples of Multus's
 * docs (test/fixtures/cni/nad/sources.json); the layout is chained: linkerd-cni in the primary.
 */
const EXAMPLES = JSON.parse(
  readFileSync(new URL('../fixtures/cni/nad/default-network-annotations.json', import.meta.url), 'utf8'),
) as { path: string; pod: string; podNamespace: string | null; value: string }[];
const ANNOTATION = 'v1.multus-cni.io/default-network';
const THIN = readFileSync(new URL('../fixtures/cni/layouts/multus/v4.3.0/70-multus.conf', import.meta.url), 'utf8');
const multusConf = (keys: Record<string, unknown>) =>
  listing({ '70-multus.conf': JSON.stringify({ ...(JSON.parse(THIN) as object), ...keys }) });
const CHAINED = multusConf({ clusterNetwork: 'k8s-pod-network', delegates: undefined });

const definition = (namespace: string, name: string, types: readonly string[]): DefinitionRead => ({
  state: 'found',
  definition: { namespace, name, config: conflist(name, types) } satisfies AttachmentDefinition,
});
const PRIMARY = {
  'kube-system/k8s-pod-network': definition('kube-system', 'k8s-pod-network', ['calico', 'linkerd-cni']),
};
const pod = (example: (typeof EXAMPLES)[number], value = example.value): AttachmentPod => ({
  namespace: example.podNamespace ?? 'app',
  name: example.pod,
  networks: undefined,
  defaultNetwork: value,
});
const view = (definitions: Record<string, DefinitionRead>, pods: readonly AttachmentPod[]): MultusApiView => ({
  definitions: new Map(Object.entries({ ...PRIMARY, ...definitions })),
  pods: { ok: true, pods },
});
function audit(input: Partial<CniAuditInput>) {
  return auditCni({
    runtime: 'containerd',
    meshPlugin: 'linkerd-cni',
    binDirs: ['/opt/cni/bin'],
    inventory: inventory(['calico', 'calico-ipam', 'portmap', 'bandwidth', 'flannel', 'multus', 'linkerd-cni']),
    listing: CHAINED,
    ...input,
  });
}
const codes = (verdict: ReturnType<typeof audit>) => verdict.findings.map((f) => `${f.severity}:${f.code}`);

describe.each(EXAMPLES)("a meshed pod with $path's default-network $value", (example) => {
  const key = `kube-system/${example.value}`;

  it('whose definition (in multusNamespace) chains linkerd-cni: healthy', () => {
    const verdict = audit({
      multusApi: view({ [key]: definition('kube-system', example.value, ['calico', 'linkerd-cni']) }, [pod(example)]),
    });
    expect(codes(verdict)).toEqual([]);
    expect(verdict.healthy).toBe(true);
  });

  it('whose definition lacks linkerd-cni: PodAttachmentMissing names pod, annotation and definition', () => {
    const verdict = audit({
      multusApi: view({ [key]: definition('kube-system', example.value, ['calico', 'portmap']) }, [pod(example)]),
    });
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing']);
    const message = verdict.findings[0]?.message ?? '';
    expect(message).toContain(`meshed pod ${pod(example).namespace}/${example.pod}`);
    expect(message).toContain(`${ANNOTATION}: "${example.value}"`);
    expect(message).toContain(`NetworkAttachmentDefinition ${key}`);
    expect(message).toContain('[calico, portmap] has no linkerd-cni');
    expect(verdict.healthy).toBe(false);
  });
});

describe("Multus's rules for the default network", () => {
  const [docs] = EXAMPLES;
  if (!docs) throw new Error('no example in default-network-annotations.json');
  const meshed = (namespace: string) => definition(namespace, docs.value, ['calico', 'linkerd-cni']);

  it("a name alone is looked up in multusNamespace, never the pod's namespace", () => {
    const inPodNamespace = audit({ multusApi: view({ [`app/${docs.value}`]: meshed('app') }, [pod(docs)]) });
    expect(codes(inPodNamespace)).toEqual(['warning:AttachmentUnread']);
    const absent = audit({
      multusApi: view({ [`kube-system/${docs.value}`]: { state: 'absent' } }, [pod(docs)]),
    });
    expect(codes(absent)).toEqual(['error:PodAttachmentMissing']);
    expect(absent.findings[0]?.message).toContain(`kube-system/${docs.value} does not exist`);
  });

  it("the conf's multusNamespace moves the lookup; namespace/name names its own", () => {
    const moved = multusConf({ clusterNetwork: 'k8s-pod-network', delegates: undefined, multusNamespace: 'multus' });
    const primary = { 'multus/k8s-pod-network': definition('multus', 'k8s-pod-network', ['calico', 'linkerd-cni']) };
    const there = audit({
      listing: moved,
      multusApi: view({ ...primary, [`multus/${docs.value}`]: meshed('multus') }, [pod(docs)]),
    });
    expect(codes(there)).toEqual([]);
    const own = audit({ multusApi: view({ [`app/${docs.value}`]: meshed('app') }, [pod(docs, `app/${docs.value}`)]) });
    expect(codes(own)).toEqual([]);
  });

  it('more than one network, or a value Multus refuses: Multus fails the pod (PodAttachmentMissing)', () => {
    const two = audit({ multusApi: view({}, [pod(docs, 'a,b')]) });
    expect(codes(two)).toEqual(['error:PodAttachmentMissing']);
    expect(two.findings[0]?.message).toContain('names 2 networks, not one');
    const refused = audit({ multusApi: view({}, [pod(docs, 'Not_A_Label')]) });
    expect(codes(refused)).toEqual(['error:PodAttachmentMissing']);
  });

  it('pods without the annotation, and a chained node whose pods cannot be listed', () => {
    expect(codes(audit({ multusApi: view({}, [{ ...pod(docs), defaultNetwork: undefined }]) }))).toEqual([]);
    const unlisted = audit({
      multusApi: { definitions: new Map(Object.entries(PRIMARY)), pods: { ok: false, message: 'forbidden' } },
    });
    expect(codes(unlisted)).toEqual(['warning:AttachmentUnread']);
    expect(unlisted.findings[0]?.message).toBe(
      `the node's pods cannot be listed (forbidden): whether a meshed pod replaces its primary network with ${ANNOTATION} is not known`,
    );
  });

  it('each finding says why: refused, none named, unread, broken', () => {
    const message = (value: string, definitions: Record<string, DefinitionRead> = {}) =>
      audit({ multusApi: view(definitions, [pod(docs, value)]) }).findings.map((f) => `${f.code}: ${f.message}`);
    const refused = message('Not_A_Label');
    expect(refused).toEqual([
      expect.stringMatching(/^PodAttachmentMissing: .*, which Multus refuses \(.+\): every sandbox/),
    ]);
    expect(message('[]')).toEqual([expect.stringContaining('which names 0 networks, not one')]);
    expect(message(docs.value)).toEqual([
      `AttachmentUnread: meshed pod ${pod(docs).namespace}/${docs.pod} has ${ANNOTATION}: "${docs.value}"; NetworkAttachmentDefinition kube-system/${docs.value}, its primary network, cannot be read (not read): whether it chains linkerd-cni is not known`,
    ]);
    const broken: DefinitionRead = {
      state: 'found',
      definition: { namespace: 'kube-system', name: docs.value, config: '{not json' },
    };
    expect(message(docs.value, { [`kube-system/${docs.value}`]: broken })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^PodAttachmentMissing: meshed pod .*; NetworkAttachmentDefinition kube-system/${docs.value}'s spec.config does not parse`,
        ),
      ),
    ]);
  });

  it('no API view (the audit was given no API): no finding, nothing read', () => {
    expect(defaultNetworkFindings(undefined, 'linkerd-cni', 'kube-system', undefined, '1.1')).toEqual([]);
  });

  it("no Multus: the annotation is nobody's to read", () => {
    const plain = listing({ '10-calico.conflist': fixture('10-calico-linkerd.conflist') });
    const verdict = audit({ listing: plain, multusApi: view({}, [pod(docs)]) });
    expect(codes(verdict)).toEqual([]);
  });
});

describe('the API reads for the default network', () => {
  const apiPod = (annotations: Record<string, string>) => ({
    metadata: { name: 'web', namespace: 'app', annotations },
    spec: { containers: [{ name: 'app' }, { name: 'linkerd-proxy' }] },
    status: { phase: 'Running' },
  });
  const reader = (pods: readonly unknown[]) => {
    const asked: string[] = [];
    let listed = 0;
    const api: MultusApiReader = {
      definition: (namespace, name) => {
        asked.push(`${namespace}/${name}`);
        return Promise.resolve({ state: 'absent' });
      },
      podsOnNode: () => {
        listed++;
        return Promise.resolve({ ok: true, pods });
      },
    };
    return { api, asked, listed: () => listed };
  };

  it('Multus chained: one pod list, and the definition each meshed pod names, in multusNamespace', async () => {
    const { api, asked, listed } = reader([apiPod({ [ANNOTATION]: 'calico-conf' }), apiPod({})]);
    const result = await readMultusApi(api, CHAINED, undefined, 'linkerd-cni', '1.1');
    expect(listed()).toBe(1);
    expect(asked.sort()).toEqual(['kube-system/calico-conf', 'kube-system/k8s-pod-network']);
    expect(result.pods).toMatchObject({
      ok: true,
      pods: [{ name: 'web', defaultNetwork: 'calico-conf' }, { name: 'web' }],
    });
  });

  it('no Multus on the node: no pod list', async () => {
    const { api, listed } = reader([apiPod({ [ANNOTATION]: 'calico-conf' })]);
    const plain = listing({ '10-calico.conflist': fixture('10-calico-linkerd.conflist') });
    await readMultusApi(api, plain, undefined, 'linkerd-cni', '1.1');
    expect(listed()).toBe(0);
  });

  it('attachmentPodOf keeps the annotation', () => {
    expect(attachmentPodOf(apiPod({ [ANNOTATION]: 'default' }), 'linkerd-cni')).toEqual({
      namespace: 'app',
      name: 'web',
      networks: undefined,
      defaultNetwork: 'default',
    });
  });
});
