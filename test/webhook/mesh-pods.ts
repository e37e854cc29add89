import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

const MESHES = resolve(import.meta.dirname, '../fixtures/meshes');

export interface MeshPod {
  /** `istio/1.29.0/hello.yaml.cni.injected#0`: the fixture file and the document in it. */
  readonly id: string;
  readonly mesh: 'linkerd' | 'istio';
  readonly validator: string | undefined;
  readonly pod: Record<string, unknown>;
}

/** Parsed YAML, read loosely: the shapes are the meshes’ own. */
type Doc = Record<string, ReturnType<typeof JSON.parse>>;

/** The pod a workload's template becomes at admission (the controller copies the template as is). */
function podOf(doc: Doc): Record<string, unknown> | undefined {
  if (doc?.kind === 'Pod') return doc;
  const template = doc?.spec?.template ?? doc?.spec?.jobTemplate?.spec?.template;
  if (!template?.spec) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...template.metadata, namespace: doc.metadata?.namespace ?? 'default' },
    spec: template.spec,
  };
}

/** Every pod of every rendered injection output under test/fixtures/meshes (see its README and sources.json). */
export function meshPods(): MeshPod[] {
  const pods: MeshPod[] = [];
  for (const mesh of ['linkerd', 'istio'] as const)
    for (const version of readdirSync(join(MESHES, mesh)))
      for (const file of readdirSync(join(MESHES, mesh, version))) {
        const text = readFileSync(join(MESHES, mesh, version, file), 'utf8');
        parseAllDocuments(text).forEach((document, index) => {
          const pod = podOf(document.toJS() as Doc);
          if (!pod) return;
          const inits = ((pod.spec as Doc).initContainers ?? []) as Doc[];
          const validator = inits.find((c) => c.name === 'linkerd-network-validator' || c.name === 'istio-validation');
          pods.push({ id: `${mesh}/${version}/${file}#${index}`, mesh, validator: validator?.name, pod });
        });
      }
  return pods;
}

export function admissionReview(pod: unknown, uid: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
      ...overrides,
    },
  });
}
