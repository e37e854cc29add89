import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { meshIdentity } from '../../src/mesh/meshes.js';
import type { CriNode } from './cri-node.js';
import { ManualClock } from './kubelet/backoff.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec, PodObject } from './kubelet/pod-spec.js';
import { MemoryPublisher } from './kubelet/publisher.js';
import { bridge, conflist, injectedPod, manifestContainer, podOf, portmap } from './scenario.js';
import { startNode } from './suite-node.js';

/**
 * Kuma pods through containerd's CRI, as the kubelet runs them: kuma-validation exactly as Kuma's
 * injector renders it (kumahq/kuma's inject.34 golden, 2.14.3: `/usr/bin/kumactl install
 * transparent-proxy-validator`, uid/gid 5678, no capabilities, a read-only root and its /tmp
 * emptyDir) with only its image swapped for Interlock's, and Interlock's own printed
 * `manifest --mesh kuma`. On a node whose chain has kuma-cni (the stand-in writing Kuma's own
 * rules golden, 2.14.3 debian-12-default, IPv4 nft) the validator exits 0 and the pod runs; where
 * the chain lacks it, it exits Kuma's failure code as docs/meshes.md documents it, with the
 * reason in the termination message the kubelet reads.
 */
const KUMA = meshIdentity('kuma');
const MESH_FIXTURES = fileURLToPath(new URL('../../test/fixtures/meshes/kuma/2.14.3/', import.meta.url));
const MESHES_DOC = fileURLToPath(new URL('../../docs/meshes.md', import.meta.url));
const INJECTED = 'kuma/2.14.3/injector/inject.34.golden.yaml';
const VALIDATOR = KUMA.containers.validator;

let node: CriNode;
let scratch: string;
let rulesFile: string;
let index = 70;
const pods: PodRun[] = [];

beforeAll(async () => {
  node = await startNode();
  scratch = await mkdtemp(join(tmpdir(), 'interlock-cri-kuma-'));
  // Upstream's harness writes `ifPlaceholder` for the loopback interface's name; it is `lo` in a pod.
  const golden = await readFile(join(MESH_FIXTURES, 'transparentproxy/debian-12-default.iptables-nft.golden'), 'utf8');
  rulesFile = join(scratch, 'kuma-2.14.3-debian-12-default.v4.rules');
  await writeFile(rulesFile, golden.replaceAll('ifPlaceholder', 'lo'));
}, 300_000);
afterAll(async () => {
  await node?.clearConfigs();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(pods.splice(0).map((pod) => pod.stop()));
});

/** The node's chain with kuma-cni writing Kuma's rules, or without it; waits for the CRI to load it. */
async function chain(meshed: boolean): Promise<void> {
  index += 1;
  const plugins = [bridge(node, index), portmap, ...(meshed ? [{ type: KUMA.cniPlugin, rulesFile }] : [])];
  await node.clearConfigs();
  await node.writeConfig('10-primary.conflist', conflist(plugins));
  await node.waitCniLoaded(new RegExp(`ilkcri${index}\\b`));
}

/** Runs the pod until the validator's first verdict: a pass (the pod runs) or its first failure. */
async function verdictOf(pod: PodObject): Promise<{ exitCode: number; message: string; run: PodRun }> {
  const clock = new ManualClock();
  const run = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher(), clock }).start(pod);
  pods.push(run);
  await Promise.race([run.outcome, clock.sleepsStarted(1)]);
  const attempt = run.attempts.find((candidate) => candidate.name === VALIDATOR);
  if (!attempt)
    throw new Error(`${VALIDATOR} did not run: ${JSON.stringify(await Promise.race([run.outcome, 'pending']))}`);
  return { exitCode: attempt.exitCode, message: attempt.message, run };
}

/**
 * Kuma's injected pod. The golden annotates its inbound port as 15055 and the injector passes it
 * as `--validation-server-port`; Kuma's rules golden redirects to the default, so the pod here
 * carries the injector's default (the preset's inbound port), as a pod without that annotation
 * is rendered. Every other argument, the command and the securityContext are the golden's.
 */
async function kumaPod(): Promise<{ pod: PodObject; validator: ContainerSpec; rendered: ContainerSpec }> {
  const { pod, validator } = await injectedPod(INJECTED, VALIDATOR);
  const args = (validator.args ?? []).map((arg) =>
    arg.startsWith('--validation-server-port=') ? `--validation-server-port=${KUMA.capture.inboundPort}` : arg,
  );
  const swapped = { ...validator, args };
  const initContainers = (pod.spec.initContainers ?? []).map((c) => (c.name === VALIDATOR ? swapped : c));
  return { pod: { ...pod, spec: { ...pod.spec, initContainers } }, validator: swapped, rendered: validator };
}

/** The failure code docs/meshes.md gives Kuma ("**Failure code 98, not Kuma's 1.**"). */
async function documentedFailureCode(): Promise<number> {
  const match = /\*\*Failure code (\d+), not Kuma's 1\.\*\*/.exec(await readFile(MESHES_DOC, 'utf8'));
  if (!match) throw new Error('docs/meshes.md does not state the Kuma failure code');
  return Number(match[1]);
}

describe("Kuma's injected kuma-validation through the CRI, image swapped for Interlock's", () => {
  it("is the injector's container: kumactl's command, uid 5678, read-only root, the /tmp emptyDir, first of the init containers", async () => {
    const { pod, rendered } = await kumaPod();
    expect(rendered.command).toEqual(KUMA.dropIn?.command);
    expect(rendered.args).toEqual([
      '--config-file=/tmp/.kumactl',
      '--ip-family-mode=ipv4',
      '--validation-server-port=15055',
    ]);
    expect(rendered.securityContext).toMatchObject({
      runAsUser: KUMA.validatorUid,
      runAsGroup: KUMA.validatorUid,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // `kuma.io/init-first`: the validator before the application's own init container.
    expect(pod.spec.initContainers?.map((c) => c.name)).toEqual([VALIDATOR, 'init']);
    expect(pod.spec.volumes).toEqual([{ name: 'kuma-sidecar-tmp', emptyDir: { sizeLimit: '10M' } }]);
  });

  it("captured by kuma-cni: exits 0, the app's init container and the pod run after it", async () => {
    await chain(true);
    const { pod } = await kumaPod();
    const pass = await verdictOf(pod);
    expect(pass.exitCode, pass.message).toBe(0);
    expect(pass.message).toMatch(/^Intercepted: /m);
    expect(await pass.run.outcome).toMatchObject({ kind: 'running' });
    const order = pass.run.attempts.map((attempt) => attempt.name);
    expect(order.indexOf(VALIDATOR)).toBeLessThan(order.indexOf('init'));
  });

  it("not captured (no kuma-cni in the chain): exits Kuma's documented failure code with the reason in the termination message", async () => {
    const documented = await documentedFailureCode();
    expect(documented).toBe(KUMA.failureExitCode);
    await chain(false);
    const { pod } = await kumaPod();
    const fail = await verdictOf(pod);
    expect(fail.exitCode, fail.message).toBe(documented);
    expect(fail.message).toMatch(/^InterceptionMissing: /m);
    // The application's init container never started: the pod is held before it.
    expect(fail.run.attempts.map((attempt) => attempt.name)).not.toContain('init');
    expect(fail.run.statuses.get(VALIDATOR)?.lastState).toMatchObject({
      terminated: { exitCode: documented, message: expect.stringMatching(/InterceptionMissing/) },
    });
  });
});

describe("Interlock's own manifest --mesh kuma through the CRI", () => {
  it("passes on a node with kuma-cni and fails Kuma's code on one without", async () => {
    const validator = await manifestContainer(KUMA.name);
    expect(validator.name).toBe(VALIDATOR);
    await chain(true);
    const pass = await verdictOf(podOf('manifest-kuma', { initContainers: [validator] }));
    expect(pass.exitCode, pass.message).toBe(0);
    await chain(false);
    const fail = await verdictOf(podOf('manifest-kuma', { initContainers: [validator] }));
    expect(fail.exitCode, fail.message).toBe(KUMA.failureExitCode);
    expect(fail.message).toMatch(/^InterceptionMissing: /m);
  });
});
