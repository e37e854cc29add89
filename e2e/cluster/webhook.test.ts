import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshPods } from '../../scripts/mesh-pods.mjs';
import { removeAuthority, type Authority } from '../../test/harness/certs.js';
import { installWebhook } from './install.js';
import { IMAGE, kubectl, LINKERD_RULES, LINKERD_VALIDATOR, setChain, STAND_IN, STATE, waitFor } from './cluster.js';

// The admission path on a real API server: `interlock manifest --webhook --ca-bundle` applied as
// printed, the webhook running as the Deployment it prints, and a pod exactly as Linkerd's injector
// renders it (its own golden) created through the API: the API server calls the webhook, stores the
// pod with Interlock in linkerd-network-validator, and the kubelet runs it.
const FIXTURE = 'linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml';
const VALIDATOR = LINKERD_VALIDATOR;
const WEBHOOK_NS = 'interlock-webhook';
/** The image under another name in the node's containerd, as a mirror would hold it (kustomize's images:). */
const MOVED = 'docker.io/library/mesh-interlock-kustomized:e2e';
const CTR = ['-a', join(STATE, 'containerd.sock'), '-n', 'k8s.io'];

interface Container {
  name: string;
  image: string;
  restartPolicy?: string;
  securityContext?: unknown;
}
interface Pod {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec: { initContainers?: Container[]; containers: Container[]; serviceAccountName?: string };
}

let authority: Authority;
let printed: string;

/** The golden pod: its validator as rendered, every other container a stand-in process of the image here. */
function goldenPod(name: string, labels: Record<string, string> = {}): Pod {
  const fixture = meshPods().find(
    (c: { id: string; validator?: string }) => c.id.startsWith(`${FIXTURE}#`) && c.validator,
  );
  if (!fixture) throw new Error(`${FIXTURE}: no pod with a mesh validator`);
  const pod = structuredClone(fixture.pod) as unknown as Pod;
  const standIn = (c: Container): Container =>
    ({
      name: c.name,
      image: IMAGE,
      command: STAND_IN,
      ...(c.securityContext ? { securityContext: c.securityContext } : {}),
      ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}),
    }) as Container;
  pod.metadata = { ...pod.metadata, name, namespace: 'emojivoto', labels: { ...pod.metadata.labels, ...labels } };
  pod.spec.initContainers = pod.spec.initContainers?.map((c) => (c.name === VALIDATOR ? c : standIn(c)));
  pod.spec.containers = pod.spec.containers.map(standIn);
  return pod;
}

const validatorImage = async (name: string): Promise<string> =>
  kubectl([
    'get',
    'pod',
    '-n',
    'emojivoto',
    name,
    '-o',
    `jsonpath={.spec.initContainers[?(@.name=="${VALIDATOR}")].image}`,
  ]);

beforeAll(async () => {
  ({ authority, printed } = await installWebhook('cluster-webhook'));
  await kubectl(['delete', 'namespace', 'emojivoto', '--ignore-not-found', '--wait=true', '--timeout=120s']);
  await kubectl(['create', 'namespace', 'emojivoto']);
  await kubectl(['create', 'serviceaccount', 'web', '-n', 'emojivoto']);
  setChain(LINKERD_RULES);
}, 300_000);
afterAll(async () => {
  setChain(undefined);
  await kubectl(['delete', 'namespace', 'emojivoto', '--wait=false']).catch(() => undefined);
  if (authority) removeAuthority(authority);
  try {
    execFileSync('ctr', [...CTR, 'images', 'rm', MOVED], { stdio: 'pipe' });
  } catch {
    // never tagged: the test stopped before
  }
});

describe('the admission webhook, called by a real API server', () => {
  it("stores Linkerd's injected pod with Interlock in linkerd-network-validator, and the kubelet runs it to a pass", async () => {
    await kubectl(['apply', '-f', '-'], stringify(goldenPod('web-1')));
    expect(await validatorImage('web-1')).toBe(IMAGE);
    await waitFor(
      'the pod to run once its validator passed',
      async () => {
        const pod = JSON.parse(await kubectl(['get', 'pod', '-n', 'emojivoto', 'web-1', '-o', 'json'])) as {
          status: {
            phase?: string;
            initContainerStatuses?: Array<{ name: string; state: { terminated?: { exitCode: number } } }>;
          };
        };
        const validator = pod.status.initContainerStatuses?.find((c) => c.name === VALIDATOR);
        return pod.status.phase === 'Running' && validator?.state.terminated?.exitCode === 0;
      },
      180_000,
    );
  });

  it('leaves a pod labelled interlock.dev/admission=disabled as the mesh rendered it', async () => {
    await kubectl(['apply', '-f', '-'], stringify(goldenPod('web-2', { 'interlock.dev/admission': 'disabled' })));
    expect(await validatorImage('web-2')).toMatch(/^cr\.l5d\.io\/linkerd\/proxy:/);
    await kubectl(['delete', 'pod', '-n', 'emojivoto', 'web-2', '--wait=false']);
  });

  it("after kustomize's images: moves the image, the webhook injects the new one, no argument left behind", async () => {
    // The same image under another name in the node's containerd: what a mirror would hold.
    execFileSync('ctr', [...CTR, 'images', 'tag', '--force', IMAGE, MOVED], { stdio: 'pipe' });
    const dir = mkdtempSync(join(tmpdir(), 'interlock-kustomize-'));
    try {
      writeFileSync(join(dir, 'interlock.yaml'), printed);
      const [name, tag] = [IMAGE.slice(0, IMAGE.lastIndexOf(':')), IMAGE.slice(IMAGE.lastIndexOf(':') + 1)];
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        stringify({
          resources: ['interlock.yaml'],
          images: [{ name, newName: MOVED.slice(0, MOVED.lastIndexOf(':')), newTag: 'e2e' }],
        }),
      );
      expect(tag).not.toBe('');
      const rendered = await kubectl(['kustomize', dir]);
      expect(rendered).not.toContain(IMAGE);
      // The new webhook pods start off the Linkerd chain: its rules would send their call to the
      // API server (the get on their own pod) to a proxy port no one listens on here.
      setChain(undefined);
      try {
        await kubectl(['apply', '-f', '-'], rendered);
        await kubectl(['rollout', 'status', 'deployment/interlock-webhook', '-n', WEBHOOK_NS, '--timeout=180s']);
      } finally {
        setChain(LINKERD_RULES);
      }
      await kubectl(['apply', '-f', '-'], stringify(goldenPod('web-4')));
      expect(await validatorImage('web-4')).toBe(MOVED);
      await kubectl(['delete', 'pod', '-n', 'emojivoto', 'web-4', '--wait=false']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the documented uninstall (kubectl delete -f, the same output) leaves no object with Interlock's labels", async () => {
    await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=180s'], printed);
    const left = await kubectl([
      'get',
      'mutatingwebhookconfigurations,validatingwebhookconfigurations,namespaces,clusterroles,clusterrolebindings',
      '-l',
      'app.kubernetes.io/part-of=interlock',
      '-o',
      'name',
    ]);
    expect(left.trim()).toBe('');
    // The webhook is gone: a pod is admitted as the mesh rendered it.
    await kubectl(['apply', '-f', '-'], stringify(goldenPod('web-3')));
    expect(await validatorImage('web-3')).toMatch(/^cr\.l5d\.io\/linkerd\/proxy:/);
  });
});
