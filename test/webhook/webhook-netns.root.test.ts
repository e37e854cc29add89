import fastJsonPatch from 'fast-json-patch';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, corpusFile, verdictLine, usePods, type PodNamespace } from '../harness/pod-namespace.js';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { admissionReview, meshPods, type MeshPod } from '../../scripts/mesh-pods.mjs';
import { patchOf, send, type Review, type WebhookProcess } from './webhook-client.js';
import { startWebhook } from './webhook-process.js';

const pod = usePods(afterEach);
let authority: Authority;
let webhook: WebhookProcess;

beforeAll(async () => {
  authority = makeAuthority('netns');
  webhook = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'));
});
afterAll(async () => {
  webhook.child.kill('SIGKILL');
  await webhook.exited;
  removeAuthority(authority);
});

/** Parsed JSON, read loosely. */
type Json = Record<string, ReturnType<typeof JSON.parse>>;

const POD_FIELDS: Record<string, string> = {
  'metadata.name': 'web-7d9c',
  'metadata.namespace': 'shop',
  'metadata.uid': '6f1c2a1e-0000-4000-8000-000000000001',
};

/** The pod the webhook answered for, with its patch applied by a JSON Patch library. */
async function admitted(fixture: MeshPod): Promise<Json> {
  const reply = await send(webhook.port, authority.ca, '/mutate', admissionReview(fixture.pod, `netns-${fixture.id}`));
  const patch = patchOf(JSON.parse(reply.body) as Review);
  expect(patch.length).toBeGreaterThan(0);
  return fastJsonPatch.applyPatch(structuredClone(fixture.pod), patch as fastJsonPatch.Operation[], true, false)
    .newDocument as Json;
}

/** Downward-API file format: `key="value"` lines, sorted, values escaped as Go's %q. */
function downwardFile(values: Record<string, string> | undefined): string {
  return Object.entries(values ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join('\n');
}

/**
 * Runs the validator container as the kubelet would: its command and args, its env with the
 * downward API resolved, its uid and gid, and its podinfo volume (written where the test can
 * put it) in the pod network namespace.
 */
function runContainer(ns: PodNamespace, mutated: Json, name: string) {
  const container = (mutated.spec.initContainers as Json[]).find((c) => c.name === name)!;
  const podinfo = join(ns.tmp, 'podinfo');
  mkdirSync(podinfo, { recursive: true });
  writeFileSync(join(podinfo, 'annotations'), downwardFile(mutated.metadata.annotations));
  writeFileSync(join(podinfo, 'labels'), downwardFile(mutated.metadata.labels));
  const mount = (container.volumeMounts as Json[]).find((m) => m.name === 'interlock-podinfo')!;
  const env: Record<string, string> = { INTERLOCK_TERMINATION_LOG: ns.terminationLog };
  for (const entry of container.env as Json[]) {
    if (typeof entry.value === 'string') env[entry.name] = entry.value.replace(mount.mountPath, podinfo);
    else if (entry.valueFrom?.fieldRef) env[entry.name] = POD_FIELDS[entry.valueFrom.fieldRef.fieldPath] ?? '';
  }
  const { runAsUser, runAsGroup } = container.securityContext;
  const argv = imageArgv(container.command as string[] | undefined, container.args as string[]);
  return collect(ns.spawnInterlock(argv, { uid: runAsUser, gid: runAsGroup, env }), ns.terminationLog);
}

/** What Interlock's image runs for a container's command and args (image/Dockerfile). */
function imageArgv(command: string[] | undefined, args: string[]): string[] {
  // No command: the image's ENTRYPOINT ["interlock", "validate"].
  if (command === undefined) return ['validate', ...args];
  // Linkerd's path is the image's shim: exec interlock linkerd2-network-validator "$@".
  expect(command).toEqual(['/usr/lib/linkerd/linkerd2-network-validator']);
  return ['linkerd2-network-validator', ...args];
}

const CASES = [
  {
    id: 'linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml#0',
    rules: 'linkerd/cni-default',
    code: 95,
  },
  {
    id: 'linkerd/stable-2.14.0/inject_emojivoto_deployment_no_init_container.golden.yml#0',
    rules: 'linkerd/cni-default',
    code: 95,
  },
  { id: 'istio/1.29.0/hello.yaml.cni.injected#0', rules: 'istio-cni/basic', code: 126 },
  { id: 'istio/1.20.0/hello.yaml.cni.injected#0', rules: 'istio-cni/basic', code: 126 },
];

describe('the pod the webhook returns runs Interlock in the validator’s place, in a pod network namespace', () => {
  const fixtures = new Map(meshPods().map((p) => [p.id, p]));

  it.each(CASES)('$id: passes when meshed', async ({ id, rules }) => {
    const fixture = fixtures.get(id)!;
    const ns = pod();
    ns.applyRules(corpusFile(rules, 'iptables-nft-save.v4.txt'), 'nft');
    const result = await runContainer(ns, await admitted(fixture), fixture.validator!);
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(verdictLine(result.terminationMessage)).toMatch(/^Intercepted: /);
  });

  it.each(CASES)('$id: fails with the mesh’s code ($code) when not meshed', async ({ id, code }) => {
    const fixture = fixtures.get(id)!;
    const ns = pod();
    const result = await runContainer(ns, await admitted(fixture), fixture.validator!);
    expect(result.exitCode, result.stdout + result.stderr).toBe(code);
    expect(verdictLine(result.terminationMessage)).toMatch(/^InterceptionMissing: /);
  });
});
