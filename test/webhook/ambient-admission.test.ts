import fastJsonPatch from 'fast-json-patch';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { Pod } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selects } from '../../src/install-check/label-selector.js';
import { runManifest } from '../../src/cli/commands/manifest/run.js';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';
import { kubectlDecode } from '../inject/kubectl.js';
import { patchOf, send, type Review, type WebhookProcess } from './webhook-client.js';
import { startWebhook } from './webhook-process.js';

const IMAGE = 'registry.example/interlock:1.0.0';
const MODE = 'istio.io/dataplane-mode';
type Json = Record<string, unknown>;
type Entry = {
  name: string;
  namespaceSelector: unknown;
  objectSelector: unknown;
  clientConfig: { service: { path: string } };
};
interface Container {
  name: string;
  image?: string;
  command?: string[];
}
interface PodShape {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { initContainers?: Container[]; containers: Container[]; volumes?: { name: string }[] };
}

let authority: Authority;
let webhook: WebhookProcess;
let entries: Entry[];
let printed: Json;
let seq = 0;

/** The app pod a Deployment in an ambient namespace creates: no mesh container of any kind. */
function appPod(labels: Record<string, string> = {}, extra: Json = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `app-${++seq}`, namespace: 'shop', labels: { app: 'web', ...labels } },
    spec: {
      containers: [{ name: 'web', image: 'registry.example/web:1', ports: [{ containerPort: 8080 }] }],
      ...extra,
    },
  };
}

/** A pod Istio's sidecar injector injected (its own golden output), now in the same namespace. */
function sidecarPod(): Json {
  const fixture = meshPods().find((pod) => pod.id.startsWith('istio/HEAD-86c9f01fd735/hello.yaml.cni.injected'))!;
  const pod = structuredClone(fixture.pod) as Json;
  return { ...pod, metadata: { ...(pod.metadata as Json), namespace: 'shop' } };
}

/**
 * What the API server does with the printed MutatingWebhookConfiguration: every entry whose
 * namespaceSelector and objectSelector match is called on its path, in order, each patch applied
 * before the next call; then, as reinvocationPolicy IfNeeded asks when the pod changed, each once more.
 */
async function admitAsApiServer(
  pod: Json,
  namespace: Record<string, string>,
): Promise<{ pod: Json; calls: string[]; reviews: Review[] }> {
  const nsLabels = { ...namespace, 'kubernetes.io/metadata.name': 'shop' };
  const podLabels = ((pod.metadata as Json).labels ?? {}) as Record<string, string>;
  const matching = entries.filter(
    (entry) => selects(entry.namespaceSelector, nsLabels) && selects(entry.objectSelector, podLabels),
  );
  let current = structuredClone(pod);
  const calls: string[] = [];
  const reviews: Review[] = [];
  for (const round of [1, 2]) {
    let changed = false;
    for (const entry of matching) {
      const reply = await send(
        webhook.port,
        authority.ca,
        entry.clientConfig.service.path,
        admissionReview(current, `u-${++seq}`),
      );
      expect(reply.status).toBe(200);
      const review = JSON.parse(reply.body) as Review;
      reviews.push(review);
      calls.push(`${round}:${entry.name}`);
      const ops = patchOf(review);
      if (ops.length === 0) continue;
      changed = true;
      current = fastJsonPatch.applyPatch(current, ops as fastJsonPatch.Operation[], true, false).newDocument;
    }
    if (!changed) break;
    // Only a change in the first round reinvokes; the second must change nothing.
    expect(round, `round ${round} changed the pod again`).toBe(1);
  }
  return { pod: current, calls, reviews };
}

const initNames = (pod: Json) => ((pod as unknown as PodShape).spec.initContainers ?? []).map((c) => c.name);

beforeAll(async () => {
  authority = makeAuthority('server');
  const caFile = join(authority.dir, 'ca.crt');
  const manifest = await runManifest(
    ['--webhook', '--mesh', 'istio-ambient', '--ca-bundle', caFile, '--image', IMAGE],
    {},
  );
  expect(manifest.exitCode, manifest.stderr).toBe(0);
  const configuration = parseAllDocuments(manifest.stdout)
    .map((doc) => doc.toJS() as Json)
    .find((doc) => doc.kind === 'MutatingWebhookConfiguration')!;
  entries = configuration.webhooks as Entry[];
  printed = parse((await runManifest(['--mesh', 'istio-ambient', '--image', IMAGE], {})).stdout) as Json;
  webhook = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'));
});

afterAll(async () => {
  webhook.child.kill('SIGKILL');
  await webhook.exited;
  removeAuthority(authority);
});

describe('Istio ambient through the printed webhook configuration and the real webhook process', () => {
  it('an app pod in an ambient namespace gets the validator first, exactly as manifest prints it, with its volume', async () => {
    const { pod, calls } = await admitAsApiServer(appPod(), { [MODE]: 'ambient' });
    expect(calls).toEqual([
      '1:validator.webhook.interlock.dev',
      '1:ambient-namespace.webhook.interlock.dev',
      '2:validator.webhook.interlock.dev',
      '2:ambient-namespace.webhook.interlock.dev',
    ]);
    const spec = (pod as unknown as PodShape).spec;
    expect(spec.initContainers).toEqual([printed]);
    expect(spec.volumes?.map((v) => v.name)).toEqual(['interlock-podinfo']);
    new Pod(pod as never).validate();
    // The real kubectl decodes the patched pod into its Go types and gives back the same data.
    // (kubectl adds empty structs it prints as {}/null: only what the webhook wrote is compared.)
    const decoded = kubectlDecode(JSON.stringify(pod))[0] as unknown as PodShape;
    expect(decoded.spec.initContainers).toEqual(spec.initContainers);
    expect(decoded.spec.volumes).toEqual(spec.volumes);
  });

  it('a sidecar pod in the same ambient namespace gets no ambient validator (its istio-validation is replaced as before)', async () => {
    const before = sidecarPod();
    const { pod, calls } = await admitAsApiServer(before, { [MODE]: 'ambient' });
    expect(calls).toContain('1:ambient-namespace.webhook.interlock.dev');
    expect(initNames(pod)).toEqual(initNames(before));
    expect(initNames(pod)).not.toContain('istio-ambient-validation');
    const validation = (pod as unknown as PodShape).spec.initContainers!.find((c) => c.name === 'istio-validation');
    expect(validation?.image).toBe(IMAGE);
  });

  it('a pod labelled none in an ambient namespace is never sent to the ambient path, and is not patched', async () => {
    const { pod, calls } = await admitAsApiServer(appPod({ [MODE]: 'none' }), { [MODE]: 'ambient' });
    expect(calls).toEqual(['1:validator.webhook.interlock.dev']);
    expect(initNames(pod)).toEqual([]);
  });

  it('a pod labelled ambient in an unlabelled namespace is patched; an unlabelled one there is not', async () => {
    const labelled = await admitAsApiServer(appPod({ [MODE]: 'ambient' }), {});
    expect(labelled.calls).toContain('1:ambient-pod.webhook.interlock.dev');
    expect(initNames(labelled.pod)).toEqual(['istio-ambient-validation']);
    const plain = await admitAsApiServer(appPod(), {});
    expect(plain.calls).toEqual(['1:validator.webhook.interlock.dev']);
    expect(initNames(plain.pod)).toEqual([]);
  });

  it('a pod labelled ambient in an ambient namespace is sent once, not twice', async () => {
    const { calls } = await admitAsApiServer(appPod({ [MODE]: 'ambient' }), { [MODE]: 'ambient' });
    expect(calls.filter((call) => call.startsWith('1:ambient'))).toEqual(['1:ambient-namespace.webhook.interlock.dev']);
  });

  it('the pod opt-out label keeps the webhook away, ambient or not', async () => {
    const { calls } = await admitAsApiServer(appPod({ 'interlock.dev/admission': 'disabled' }), { [MODE]: 'ambient' });
    expect(calls).toEqual([]);
  });

  it('an istio-proxy container without sidecar.istio.io/status is captured by istio-cni, so it is patched', async () => {
    const pod = appPod();
    (pod.spec as { containers: Container[] }).containers.push({ name: 'istio-proxy', image: 'proxyv2' });
    const admitted = await admitAsApiServer(pod, { [MODE]: 'ambient' });
    expect(initNames(admitted.pod)).toEqual(['istio-ambient-validation']);
  });

  it('existing init containers stay, after the validator', async () => {
    const pod = appPod({}, { initContainers: [{ name: 'migrate', image: 'registry.example/migrate:1' }] });
    const admitted = await admitAsApiServer(pod, { [MODE]: 'ambient' });
    expect(initNames(admitted.pod)).toEqual(['istio-ambient-validation', 'migrate']);
  });
});

describe('what the ambient path does when the selectors are bypassed or the pod forges the validator', () => {
  const direct = async (pod: Json) => {
    const reply = await send(webhook.port, authority.ca, '/ambient', admissionReview(pod, `d-${++seq}`));
    return JSON.parse(reply.body) as Review;
  };

  it('a pod labelled none, a sidecar pod or a hostNetwork pod posted to /ambient directly gets no patch', async () => {
    for (const pod of [appPod({ [MODE]: 'none' }), sidecarPod(), appPod({}, { hostNetwork: true })]) {
      const review = await direct(pod);
      expect(review.response.allowed).toBe(true);
      expect(patchOf(review)).toEqual([]);
    }
  });

  it('an init container named as the validator but running something else is made Interlock’s', async () => {
    const forged = appPod(
      {},
      {
        initContainers: [
          { name: 'istio-ambient-validation', image: 'busybox', command: ['true'], args: ['--mesh', 'istio-ambient'] },
        ],
      },
    );
    const review = await direct(forged);
    const patched = fastJsonPatch.applyPatch(
      structuredClone(forged),
      patchOf(review) as fastJsonPatch.Operation[],
      true,
      false,
    ).newDocument;
    const container = (patched as unknown as PodShape).spec.initContainers![0]!;
    expect(container.image).toBe(IMAGE);
    expect(container.command).toBeUndefined();
    expect(container).toMatchObject({
      args: (printed as { args: string[] }).args,
      securityContext: printed.securityContext,
    });
    expect(patchOf(await direct(patched))).toEqual([]);
  });

  it('an app container under the validator name, or a forged podinfo volume, is denied with the reason', async () => {
    const app = appPod();
    (app.spec as { containers: Container[] }).containers.push({ name: 'istio-ambient-validation', image: 'busybox' });
    const appReview = await direct(app);
    expect(appReview.response.allowed).toBe(false);
    expect(appReview.response.status?.message).toMatch(/istio-ambient-validation is an app container/);
    const volume = appPod({}, { volumes: [{ name: 'interlock-podinfo', emptyDir: {} }] });
    const volumeReview = await direct(volume);
    expect(volumeReview.response.allowed).toBe(false);
    expect(volumeReview.response.status?.message).toMatch(/defines volume interlock-podinfo itself/);
  });
});
