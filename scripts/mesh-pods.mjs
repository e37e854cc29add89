// The pods of the meshes' rendered injection outputs (test/fixtures/meshes: see its README and
// sources.json), as the API server sends them to an admission webhook. Shared by the webhook
// tests and scripts/bench-webhook.mjs, which runs on plain node and cannot import TypeScript.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

const MESHES = resolve(import.meta.dirname, '../test/fixtures/meshes');
const VALIDATORS = ['linkerd-network-validator', 'istio-validation'];

/** The pod a workload's template becomes at admission (the controller copies the template as is). */
function podOf(doc) {
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

/** Every pod of every rendered injection output, each with its mesh and its validator's name. */
export function meshPods() {
  const pods = [];
  for (const mesh of ['linkerd', 'istio'])
    for (const version of readdirSync(join(MESHES, mesh)))
      for (const file of readdirSync(join(MESHES, mesh, version))) {
        const text = readFileSync(join(MESHES, mesh, version, file), 'utf8');
        parseAllDocuments(text).forEach((document, index) => {
          const pod = podOf(document.toJS());
          if (!pod) return;
          const validator = (pod.spec.initContainers ?? []).find((c) => VALIDATORS.includes(c.name));
          pods.push({ id: `${mesh}/${version}/${file}#${index}`, mesh, validator: validator?.name, pod });
        });
      }
  return pods;
}

/** The AdmissionReview the API server sends for creating `pod`; `overrides` replace request fields. */
export function admissionReview(pod, uid, overrides = {}) {
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
