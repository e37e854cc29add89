import fastJsonPatch from 'fast-json-patch';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeAuthority, removeAuthority, type Authority } from '../../test/harness/certs.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';
import { patchOf, send, spawnWebhook, type Review, type WebhookProcess } from '../../test/webhook/webhook-client.js';
import { VALIDATOR_RESOURCES } from '../../src/inject/resources.js';
import type { CriNode } from './cri-node.js';
import { ManualClock } from './kubelet/backoff.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec, PodObject, VolumeSpec } from './kubelet/pod-spec.js';
import { MemoryPublisher } from './kubelet/publisher.js';
import { bridge, conflist, injectedPod, MESH_PLUGIN, MESH_RULES, portmap, type Mesh } from './scenario.js';
import { startNode } from './suite-node.js';

// The admission path end to end: a pod exactly as the mesh's injector renders it (CNI mode, the
// meshes' own goldens in test/fixtures/meshes) goes to `interlock webhook` as an AdmissionReview
// over TLS; the JSON Patch it answers is applied with a JSON Patch library, and the patched pod
// is run through containerd's CRI the way the kubelet runs it. It must pass where the node's CNI
// chain writes the mesh's rules and fail with the mesh's code where the chain lacks the mesh.
const FAILURE: Record<Mesh, number> = { linkerd: 95, istio: 126 };
const CASES: ReadonlyArray<{ mesh: Mesh; file: string; validator: string }> = [
  {
    mesh: 'linkerd',
    file: 'linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml',
    validator: 'linkerd-network-validator',
  },
  // Injected with a 20Mi memory limit: a passing drop-in fits (mesh-validators.test.ts), the failure
  // path may not, so the webhook raises it to Interlock's own (MEMORY_LIMIT_RULE).
  {
    mesh: 'linkerd',
    file: 'linkerd/stable-2.14.0/inject_emojivoto_deployment_no_init_container.golden.yml',
    validator: 'linkerd-network-validator',
  },
  { mesh: 'istio', file: 'istio/1.29.0/hello.yaml.cni.injected', validator: 'istio-validation' },
];
const IMAGE = 'registry.example/interlock:1.0.0';
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Parsed JSON, read loosely: the shapes are the meshes' own. */
type Json = Record<string, ReturnType<typeof JSON.parse>>;

let node: CriNode;
let authority: Authority;
let webhook: WebhookProcess;
let index = 70;
const pods: PodRun[] = [];
beforeAll(async () => {
  node = await startNode();
  authority = makeAuthority('cri');
  webhook = await spawnWebhook([process.execPath, CLI], join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'));
}, 300_000);
afterAll(async () => {
  webhook?.child.kill('SIGKILL');
  await webhook?.exited;
  if (authority) removeAuthority(authority);
  await node?.stop();
});
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.stop();
});

async function chain(mesh: Mesh, meshed: boolean): Promise<void> {
  index += 1;
  const plugins = [
    bridge(node, index),
    portmap,
    ...(meshed ? [{ type: MESH_PLUGIN[mesh], rulesFile: MESH_RULES[mesh] }] : []),
  ];
  await node.clearConfigs();
  await node.writeConfig('10-primary.conflist', conflist(plugins));
  await node.waitCniLoaded(new RegExp(`ilkcri${index}\\b`));
}

/** The injected pod through the webhook: the AdmissionReview round trip, the patch applied. */
async function admitted(file: string, validator: string): Promise<{ patched: Json; review: Review }> {
  const fixture = meshPods().find((candidate) => candidate.id.startsWith(`${file}#`) && candidate.validator);
  if (!fixture) throw new Error(`${file}: no pod with a mesh validator`);
  const reply = await send(webhook.port, authority.ca, '/mutate', admissionReview(fixture.pod, `cri-${validator}`));
  expect(reply.status).toBe(200);
  const review = JSON.parse(reply.body) as Review;
  const patch = patchOf(review);
  const patched = fastJsonPatch.applyPatch(
    structuredClone(fixture.pod),
    patch as fastJsonPatch.Operation[],
    true,
    false,
  ).newDocument as Json;
  return { patched, review };
}

/**
 * The pod the CRI runs: the patched validator exactly as admitted, the pod's admitted metadata
 * and Interlock's podinfo volume; the mesh's other containers keep their place with a stand-in
 * process (the real proxies are not here).
 */
async function criPod(file: string, validator: string, patched: Json): Promise<PodObject> {
  const { pod } = await injectedPod(file, validator);
  const container = (patched.spec.initContainers as ContainerSpec[]).find((c) => c.name === validator)!;
  const volumes = (patched.spec.volumes as Json[]).filter((volume) => volume.downwardAPI) as VolumeSpec[];
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      ...(patched.metadata.labels ? { labels: patched.metadata.labels as Record<string, string> } : {}),
      ...(patched.metadata.annotations ? { annotations: patched.metadata.annotations as Record<string, string> } : {}),
    },
    spec: {
      ...pod.spec,
      initContainers: (pod.spec.initContainers ?? []).map((c) => (c.name === validator ? container : c)),
      volumes: [...(pod.spec.volumes ?? []), ...volumes],
    },
  };
}

async function verdictOf(pod: PodObject, validator: string): Promise<{ exitCode: number; message: string }> {
  const clock = new ManualClock();
  const run = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher(), clock }).start(pod);
  pods.push(run);
  await Promise.race([run.outcome, clock.sleepsStarted(1)]);
  const attempt = run.attempts.find((candidate) => candidate.name === validator);
  if (!attempt) throw new Error(`${validator} did not run`);
  return { exitCode: attempt.exitCode, message: attempt.message };
}

describe("the webhook's patched pod, run through containerd's CRI", () => {
  for (const { mesh, file, validator } of CASES) {
    it(`${file}: admitted with Interlock in ${validator}; passes meshed, fails ${FAILURE[mesh]} unmeshed`, async () => {
      const { patched, review } = await admitted(file, validator);
      const original = meshPods().find((candidate) => candidate.id.startsWith(`${file}#`) && candidate.validator)!;
      const before = ((original.pod.spec as Json).initContainers as Json[]).find((c) => c.name === validator)!;
      const inits = patched.spec.initContainers as Json[];
      const after = inits.find((c) => c.name === validator)!;
      // Interlock runs in the mesh's place: same name, position, args and securityContext.
      expect(after.image).toBe(IMAGE);
      expect(after.args).toEqual(before.args);
      expect(after.securityContext).toEqual(before.securityContext);
      expect(after.resources.limits.memory).toBe(VALIDATOR_RESOURCES.limits.memory);
      // A limit Interlock would be OOM-killed under is raised, and the response says so.
      const low = before.resources?.limits?.memory === '20Mi';
      expect(review.response.warnings ?? []).toEqual(
        low ? [expect.stringMatching(/memory limit 20Mi is raised to 128Mi/)] : [],
      );
      expect(inits.indexOf(after)).toBe(((original.pod.spec as Json).initContainers as Json[]).indexOf(before));
      // Reinvoked with the patched pod, the webhook has nothing more to change.
      const again = await send(webhook.port, authority.ca, '/mutate', admissionReview(patched, `cri-again-${mesh}`));
      expect(patchOf(JSON.parse(again.body) as Review)).toEqual([]);

      await chain(mesh, true);
      const pass = await verdictOf(await criPod(file, validator, patched), validator);
      expect(pass.exitCode, pass.message).toBe(0);
      await chain(mesh, false);
      const fail = await verdictOf(await criPod(file, validator, patched), validator);
      expect(fail.exitCode, fail.message).toBe(FAILURE[mesh]);
      expect(fail.message).toMatch(/InterceptionMissing/);
    });
  }
});
