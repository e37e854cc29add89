import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CriNode } from './cri-node.js';
import { ManualClock } from './kubelet/backoff.js';
import type { ContainerStatus } from './kubelet/container-status.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec } from './kubelet/pod-spec.js';
import { MemoryPublisher } from './kubelet/publisher.js';
import { bridge, cniCheck, conflist, inSubnet, manifestContainer, meshPlugin, podOf, portmap } from './scenario.js';
import { startNode } from './suite-node.js';

// The CNI audit's field scenarios on the kubelet's path: containerd's CRI plugin loads the conf dir
// (live, through its syncer), runs the real bridge + host-local chain with the mesh stand-in, and
// Interlock's validator runs as `interlock manifest` prints it. cni-check's prediction is compared
// with what the runtime did.
let node: CriNode;
let validator: ContainerSpec;
const pods: PodRun[] = [];
beforeAll(async () => {
  node = await startNode();
  validator = await manifestContainer('linkerd');
}, 300_000);
afterAll(async () => {
  await node?.stop();
});
afterEach(async () => {
  // As the kubelet tears pods down: each on its own, not one after the other.
  await Promise.all(pods.splice(0).map((pod) => pod.stop()));
  await node.clearConfigs();
});

const withMesh = (index: number, cniVersion = '1.0.0', mesh: Record<string, unknown> = meshPlugin('linkerd')) =>
  conflist([bridge(node, index), portmap, mesh], cniVersion);

/** A meshed pod on the node: Interlock's init container, then the app. */
function startPod(name: string, clock?: ManualClock): PodRun {
  const kubelet = new Kubelet({
    node,
    nodeName: 'node-a',
    publisher: new MemoryPublisher(),
    ...(clock ? { clock } : {}),
  });
  const pod = kubelet.start(podOf(name, { initContainers: [validator] }));
  pods.push(pod);
  return pod;
}

/** The validator's first run on a pod whose validator fails: the kubelet has it in CrashLoopBackOff. */
async function firstFailure(name: string): Promise<{ pod: PodRun; status: ContainerStatus }> {
  const clock = new ManualClock();
  const pod = startPod(name, clock);
  await clock.sleepsStarted(1);
  return { pod, status: pod.statuses.get(validator.name) as ContainerStatus };
}

describe('CNI audit scenarios through the CRI', () => {
  it('S1 chained: the pod gets the primary address, the validator passes, and cni-check predicted the file', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(1));
    await node.waitCniLoaded('ilkcri1');
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(0);
    expect(check.verdict.loads).toMatchObject({
      file: '10-primary.conflist',
      chain: ['bridge', 'portmap', 'linkerd-cni'],
    });
    const pod = startPod('s1');
    const outcome = await pod.outcome;
    expect(outcome.kind === 'running' && inSubnet(outcome.podIP, 1)).toBe(true);
    expect(pod.attempts[0]).toMatchObject({ exitCode: 0, message: expect.stringMatching(/^Intercepted: /) });
  });

  it('S2 mesh .conf sorts first: the CRI refuses the sandbox (no eth0 address); cni-check names that file', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(2));
    await node.writeConfig(
      '05-linkerd-cni.conf',
      JSON.stringify({ cniVersion: '0.3.1', name: 'linkerd-cni', ...meshPlugin('linkerd') }),
    );
    await node.waitCniLoaded('"Name":"linkerd-cni"');
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(95);
    expect(check.verdict.findings[0]).toMatchObject({ code: 'MeshFirst', file: '05-linkerd-cni.conf' });
    const outcome = await startPod('s2').outcome;
    // containerd 1.6 looks for the result's eth0 and, finding no address, refuses the sandbox.
    expect(outcome).toMatchObject({
      kind: 'sandbox-failed',
      error: expect.stringContaining('failed to find network info for sandbox'),
    });
    expect((await node.cri.call('ListPodSandbox'))['items']).toEqual([]);
  });

  it('S3 mesh plugin missing from the chain: the validator fails InterceptionMissing (95) into CrashLoopBackOff', async () => {
    await node.writeConfig('10-primary.conflist', conflist([bridge(node, 3), portmap]));
    await node.waitCniLoaded('ilkcri3');
    const check = await cniCheck(node);
    expect(check.verdict.findings.map((finding) => finding.code)).toEqual(['MeshMissing']);
    const { status } = await firstFailure('s3');
    expect(status.state).toMatchObject({ waiting: { reason: 'CrashLoopBackOff' } });
    expect(status.lastState).toMatchObject({
      terminated: { exitCode: 95, message: expect.stringMatching(/^InterceptionMissing: /) },
    });
  });

  it('S4 cniVersion 1.0.0 with a plugin that speaks only 0.3.x: the CRI fails the sandbox naming it; cni-check agrees', async () => {
    await node.writeConfig(
      '10-primary.conflist',
      conflist([bridge(node, 4), { type: 'old-mesh' }, meshPlugin('linkerd')]),
    );
    await node.waitCniLoaded('old-mesh');
    const check = await cniCheck(node);
    expect(check.verdict.findings).toEqual([
      expect.objectContaining({
        code: 'VersionUnsupported',
        message: expect.stringContaining('plugin "old-mesh" supports CNI versions 0.3.0, 0.3.1, not 1.0.0'),
      }),
    ]);
    const outcome = await startPod('s4').outcome;
    expect(outcome).toMatchObject({
      kind: 'sandbox-failed',
      error: expect.stringMatching(/old-mesh.*incompatible CNI versions/s),
    });
  });

  it('S5 a half-written file sorts first: the CRI plugin stops setting up pods; cni-check names the file', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(5));
    await node.waitCniLoaded('ilkcri5');
    await node.writeConfig('00-new.conflist', withMesh(6).slice(0, 90));
    const state = await node.waitCni((cni) => !cni.networkReady);
    // The syncer's failed reload drops the configuration it held: no pod gets a network now.
    expect(state.message).toBe('Network plugin returns error: cni plugin not initialized');
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(95);
    expect(check.verdict.findings[0]).toMatchObject({ code: 'PartialFile', file: '00-new.conflist' });
    const outcome = await startPod('s5').outcome;
    expect(outcome).toMatchObject({
      kind: 'sandbox-failed',
      error: expect.stringContaining('cni plugin not initialized'),
    });
    // The installer finishes the file: the next write reloads it, and pods get its network.
    await node.writeConfig('00-new.conflist', withMesh(6));
    await node.waitCni((cni) => cni.networkReady && cni.config.includes('ilkcri6'));
    const after = await startPod('s5-after').outcome;
    expect(after.kind === 'running' && inSubnet(after.podIP, 6)).toBe(true);
  });

  it('S6 leftovers, then drift: a stale file is only a warning; the primary rewritten without the mesh makes the next pod fail', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(7));
    await node.writeConfig('99-old.conflist', conflist([bridge(node, 8), { type: 'uninstalled-mesh' }]));
    await node.waitCniLoaded('ilkcri7');
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(0);
    expect(check.verdict.findings).toEqual([
      expect.objectContaining({ code: 'Leftover', severity: 'warning', file: '99-old.conflist' }),
    ]);
    const passing = startPod('s6-before');
    expect(await passing.outcome).toMatchObject({ kind: 'running' });
    await node.writeConfig('10-primary.conflist', conflist([bridge(node, 7), portmap]));
    await node.waitCni((state) => state.config.includes('ilkcri7') && !state.config.includes('linkerd-cni'));
    expect((await cniCheck(node)).verdict.findings.map((finding) => finding.code)).toContain('MeshMissing');
    const { status } = await firstFailure('s6-after');
    expect(status.lastState).toMatchObject({
      terminated: { exitCode: 95, message: expect.stringMatching(/^InterceptionMissing: /) },
    });
  });

  it('late rules: the mesh plugin writes its rules 2 s after the sandbox is up, and the validator still passes', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(9, '1.0.0', { ...meshPlugin('linkerd'), lateMs: 2000 }));
    await node.waitCniLoaded('lateMs');
    const pod = startPod('late');
    expect(await pod.outcome).toMatchObject({ kind: 'running' });
    const run = pod.attempts[0];
    expect(run?.exitCode).toBe(0);
    // It took more than one attempt: the rules were not there when it started.
    expect(Number(/attempt (\d+) of/.exec(run?.message ?? '')?.[1])).toBeGreaterThan(1);
  });
});
