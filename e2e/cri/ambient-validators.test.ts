import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ambientGolden, HEAD_TAG, restoreTexts, ZTUNNEL_STANDIN } from '../../test/harness/ambient-goldens.js';
import type { CriNode } from './cri-node.js';
import { ManualClock } from './kubelet/backoff.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec, PodObject } from './kubelet/pod-spec.js';
import { MemoryPublisher } from './kubelet/publisher.js';
import { bridge, conflist, manifestContainer, podOf, portmap, type Mesh } from './scenario.js';
import { startNode } from './suite-node.js';

// Istio ambient through the kubelet's path: the chained CNI stand-in plays istio-cni's node
// agent (it writes istio-cni's own golden rules into the pod's namespace, the ip rule and table
// 100, and starts the ztunnel stand-in there), and Interlock's validator runs as the pod's init
// container exactly as `interlock manifest --mesh istio-ambient` prints it (no capability).
const ISTIO_FAILURE = 126;

let node: CriNode;
let validator: ContainerSpec;
let rulesFile: string;
let index = 70;
const pods: PodRun[] = [];
beforeAll(async () => {
  node = await startNode();
  validator = await manifestContainer('istio-ambient' as Mesh);
  rulesFile = join(node.root, 'ambient-rules.v4.txt');
  await writeFile(rulesFile, restoreTexts(ambientGolden(HEAD_TAG, 'iptables', 'default')).ipv4);
}, 300_000);
afterAll(async () => {
  await node?.stop();
});
afterEach(async () => {
  await Promise.all(pods.splice(0).map((pod) => pod.stop()));
});

/** The node's chain: bridge, portmap, then istio-cni's stand-in with what it is told to do. */
async function chain(ambient: Record<string, unknown> | undefined): Promise<void> {
  index += 1;
  const plugins = [
    bridge(node, index),
    portmap,
    ...(ambient ? [{ type: 'istio-cni', stateDir: node.root, ...ambient }] : []),
  ];
  await node.clearConfigs();
  await node.writeConfig('10-primary.conflist', conflist(plugins));
  await node.waitCniLoaded(new RegExp(`ilkcri${index}\\b`));
}

async function verdictOf(pod: PodObject): Promise<{ exitCode: number; message: string; run: PodRun }> {
  const clock = new ManualClock();
  const kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher(), clock });
  const run = kubelet.start(pod);
  pods.push(run);
  await Promise.race([run.outcome, clock.sleepsStarted(1)]);
  const attempt = run.attempts.find((candidate) => candidate.name === validator.name);
  if (!attempt)
    throw new Error(`${validator.name} did not run: ${JSON.stringify(await Promise.race([run.outcome, 'pending']))}`);
  return { exitCode: attempt.exitCode, message: attempt.message, run };
}

const pod = (name: string): PodObject => podOf(name, { initContainers: [validator] });

describe('istio-ambient through the CRI', () => {
  it('captured: the node agent wrote the rules and ztunnel listens; the pod runs', async () => {
    await chain({ rulesFile, markRoute: true, ztunnel: ZTUNNEL_STANDIN });
    const run = await verdictOf(pod('ambient-captured'));
    expect(run.exitCode, run.message).toBe(0);
    expect(run.message).toMatch(/^Intercepted: /);
    expect(run.message).toMatch(/redirected in the pod to the listener on ztunnel's port 15001 .*captured at once/);
    expect(await run.run.outcome).toMatchObject({ kind: 'running' });
  });

  it(`no rules (ztunnel listening): ${ISTIO_FAILURE}, AmbientNotCaptured`, async () => {
    await chain({ ztunnel: ZTUNNEL_STANDIN });
    const run = await verdictOf(pod('ambient-no-rules'));
    expect(run.exitCode, run.message).toBe(ISTIO_FAILURE);
    expect(run.message).toMatch(/^AmbientNotCaptured: /);
  });

  it('late capture: the rules land 2 s after ADD; exit 0, with the wait in the verdict', async () => {
    await chain({ rulesFile, lateMs: 2000, markRoute: true, ztunnel: ZTUNNEL_STANDIN });
    const run = await verdictOf(pod('ambient-late'));
    expect(run.exitCode, run.message).toBe(0);
    expect(run.message).toMatch(/captured after \d+(?:\.\d)?s, attempt \d+: it was not captured at first/);
  });
});
