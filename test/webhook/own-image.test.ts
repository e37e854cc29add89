import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageOfContainer, ownContainerImage } from '../../src/kube/own-image.js';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import { kubeconfigAccess } from '../../src/kube/kubeconfig.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';
import { patchOf, send, type Review } from './webhook-client.js';
import { startWebhook } from './webhook-process.js';

/**
 * The webhook and the agent take the image from their own pod, so that kustomize's `images:` (or
 * `kubectl set image`), which rewrites only containers' `image:` fields, changes what they inject
 * and trust too. The pod is the API stand-in's; the webhook is the real one (the snapshot).
 */
const MIRRORED = 'mirror.example/platform/interlock:2.0.0';
const dir = mkdtempSync(join(tmpdir(), 'interlock-own-image-'));
let api: KubeApi;
let authority: Authority;
const env = () => ({ KUBECONFIG: join(dir, 'kubeconfig'), POD_NAME: 'interlock-webhook-7d9-x2', POD_NAMESPACE: 'iw' });

function webhookPod(containers: { name: string; image: string }[]) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'interlock-webhook-7d9-x2', namespace: 'iw', uid: 'w-uid', resourceVersion: '1' },
    spec: { containers },
  };
}

beforeAll(async () => {
  api = await startKubeApi();
  writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  authority = makeAuthority('server');
});
afterAll(async () => {
  await api.close();
  removeAuthority(authority);
  rmSync(dir, { recursive: true, force: true });
});

describe("a container's own image, from its pod", () => {
  it('is the named container’s, or the only one’s; another container’s never', () => {
    const pod = webhookPod([
      { name: 'sidecar', image: 'proxy:1' },
      { name: 'webhook', image: MIRRORED },
    ]);
    expect(imageOfContainer(pod, 'webhook', 'iw/p')).toEqual({ ok: true, value: MIRRORED });
    expect(imageOfContainer(webhookPod([{ name: 'renamed', image: MIRRORED }]), 'webhook', 'iw/p').ok).toBe(true);
    const wrong = imageOfContainer(pod, 'node-agent', 'iw/p');
    expect(wrong.ok ? wrong.value : wrong.error.message).toBe('pod iw/p has no container node-agent with an image');
    expect(imageOfContainer({ spec: { containers: 'x' } }, 'webhook', 'iw/p').ok).toBe(false);
  });

  it('is read with one get on the pod the downward API names; a missing pod is an error naming it', async () => {
    const access = kubeconfigAccess(join(dir, 'kubeconfig'));
    if (!access.ok) throw new Error(access.error.message);
    const missing = await ownContainerImage(access.value, env(), 'webhook', 5000);
    expect(missing.ok ? missing.value : missing.error.message).toMatch(
      /^cannot read this pod iw\/interlock-webhook-7d9-x2: GET \/api\/v1\/namespaces\/iw\/pods\/interlock-webhook-7d9-x2 answered 404/,
    );
    const unnamed = await ownContainerImage(access.value, { POD_NAME: 'x' }, 'webhook', 5000);
    expect(unnamed.ok ? unnamed.value : unnamed.error.reason).toBe('KubeUnavailable');
  });
});

describe('interlock webhook without --image, in a pod', () => {
  const tls = () => [join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key')] as const;

  it('does not start when its pod cannot be read, and says --image would do', async () => {
    expect(api.store.get('pods', 'iw', 'interlock-webhook-7d9-x2')).toBeUndefined();
    const started = startWebhook(...tls(), [], env(), null);
    await expect(started).rejects.toThrow(
      /exited 66: .*cannot read this pod iw\/interlock-webhook-7d9-x2.*unless --image names it/s,
    );
  });

  it('injects the image its own container runs', async () => {
    api.store.put('pods', webhookPod([{ name: 'webhook', image: MIRRORED }]));
    const webhook = await startWebhook(...tls(), [], env(), null);
    try {
      expect(webhook.logs.find((line) => line.msg === 'webhook listening')).toMatchObject({
        image: MIRRORED,
        imageFrom: 'pod',
      });
      const fixture = meshPods().find((pod) => pod.validator !== undefined)!;
      const reply = await send(webhook.port, authority.ca, '/mutate', admissionReview(fixture.pod, 'own-1'));
      const ops = patchOf(JSON.parse(reply.body) as Review);
      expect(JSON.stringify(ops)).toContain(MIRRORED);
      expect(JSON.stringify(ops)).not.toContain('mesh-interlock:dev');
      expect(api.requests.filter((request) => request.method !== 'GET')).toEqual([]);
    } finally {
      webhook.child.kill('SIGKILL');
      await webhook.exited;
    }
  });
});
