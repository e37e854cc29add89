import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeKubeconfig } from '../../test/harness/kube-api/kubeconfig.js';
import { startKubeApi } from '../../test/harness/kube-api/server.js';
import { captureOutput, waitFor } from '../../test/node-agent/agent-process.js';
import { CriNode } from '../cri/cri-node.js';
import { buildPauseImage } from '../cri/images.js';
import { sandboxConfig } from '../cri/kubelet/container-config.js';
import type { PodObject } from '../cri/kubelet/pod-spec.js';
import { bridge, conflist, meshPlugin, portmap } from '../cri/scenario.js';

const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
/** The V8 flags the image runs node with (scripts/node-runtime-flags.json): the agent as shipped. */
const RUNTIME_FLAGS = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../scripts/node-runtime-flags.json', import.meta.url)), 'utf8'),
) as string[];
const TICK_MS = 1000 / 100;

export interface RecheckBench {
  readonly pods: number;
  readonly sweepSeconds: readonly number[];
  readonly captured: number;
  /** The last sweep's unknowns by cause, with an example each: a bench that checked nothing says why. */
  readonly unknown: string;
  readonly idleCpuMsPerSecond: number;
  readonly sweepCpuMsPerPod: readonly number[];
  readonly childCpuMsPerPod: number;
  readonly idleRssMiB: number;
  readonly peakRssMiB: number;
}

/** utime + stime and the reaped children's, in ms (clock ticks of 10 ms). */
function cpuOf(pid: number): { self: number; children: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const at = (index: number) => Number(fields[index - 3]);
  return { self: (at(14) + at(15)) * TICK_MS, children: (at(16) + at(17)) * TICK_MS };
}

const hwmMiB = (pid: number): number =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

function mountNsOf(node: CriNode): string {
  const recorded = readFileSync(join(node.root, 'mntns'), 'utf8');
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (
        readlinkSync(`/proc/${pid}/ns/mnt`) === recorded &&
        readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'containerd'
      )
        return `/proc/${pid}/ns/mnt`;
    } catch {
      // gone
    }
  }
  throw new Error('containerd is not running');
}

function podObject(index: number): PodObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `bench-${index}`, namespace: 'default', uid: `bench-uid-${process.pid}-${index}` },
    spec: {
      nodeName: 'node-a',
      restartPolicy: 'Always',
      initContainers: [{ name: 'linkerd-network-validator', image: 'x' }],
      containers: [{ name: 'app', image: 'x' }],
    },
  } as PodObject;
}

/** 110 sandboxes with the mesh's rules, 4 at a time; each pod Running in the API with its IP. */
async function startSandboxes(node: CriNode, count: number, put: (pod: object) => void): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const pod = podObject(next++);
      const config = sandboxConfig(pod, 0, join(node.root, 'logs'), `${node.cgroupParent}/pod${pod.metadata.uid}`);
      const reply = await node.cri.call('RunPodSandbox', { config });
      const status = await node.cri.call('PodSandboxStatus', { pod_sandbox_id: reply['pod_sandbox_id'] });
      const ip = String(((status['status'] as Record<string, unknown>)['network'] as Record<string, unknown>)['ip']);
      put({ ...pod, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } });
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** The agent re-checking `pods` real sandboxes: its idle cost, then `sweeps` sweeps. */
export async function benchRecheck(pods = 110, sweeps = 3, intervalMs = 8000): Promise<RecheckBench> {
  await buildPauseImage();
  const node = await CriNode.start();
  const api = await startKubeApi();
  const dir = mkdtempSync(join(tmpdir(), 'interlock-bench-recheck-'));
  try {
    await node.writeConfig('10-primary.conflist', conflist([bridge(node, 7), portmap, meshPlugin('linkerd')]));
    await node.waitCniLoaded(/ilkcri7\b/);
    api.store.put('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', uid: 'node-a' } });
    if (!api.store.get('namespaces', undefined, 'default'))
      api.store.put('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    // The re-check reads the pods' Namespace (ambient's label, Linkerd's annotations), as in a cluster.
    if (!api.store.get('namespaces', undefined, 'default'))
      api.store.put('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await startSandboxes(node, pods, (pod) => api.store.put('pods', pod as never));
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
    const args = ['node', '--node-name', 'node-a', '--mesh', 'linkerd', '--listen', '127.0.0.1:0'];
    const recheck = ['--recheck-interval', `${intervalMs}ms`, '--cri-endpoint', `unix://${node.socket}`];
    const child = spawn(
      'nsenter',
      [`--mount=${mountNsOf(node)}`, process.execPath, ...RUNTIME_FLAGS, MAIN, ...args, ...recheck],
      {
        env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const { logs } = captureOutput(child);
    try {
      return await measure(child.pid!, logs, pods, sweeps, intervalMs);
    } finally {
      child.kill('SIGKILL');
    }
  } finally {
    await node.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(
  pid: number,
  logs: Record<string, unknown>[],
  pods: number,
  sweeps: number,
  intervalMs: number,
): Promise<RecheckBench> {
  await waitFor('the agent to list pods', () => logs.find((line) => line.msg === 'pods listed: ready'), 30_000);
  // Idle: the agent holds the 110 pods and waits for its first sweep.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const idleStart = { cpu: cpuOf(pid).self, at: performance.now() };
  await new Promise((resolve) => setTimeout(resolve, intervalMs / 2));
  const idleCpuMsPerSecond = ((cpuOf(pid).self - idleStart.cpu) / (performance.now() - idleStart.at)) * 1000;
  const idleRssMiB = hwmMiB(pid);
  const sweepSeconds: number[] = [];
  const sweepCpuMsPerPod: number[] = [];
  let captured = 0;
  let unknown = '';
  for (let index = 0; index < sweeps; index++) {
    const before = { cpu: cpuOf(pid).self, at: performance.now() };
    const done = (line: Record<string, unknown>) => line.msg === 're-check sweep finished' && line.sweep === index + 1;
    const line = await waitFor(`sweep ${index + 1}`, () => logs.find(done), intervalMs * 3 + 60_000);
    const seconds = Number(line.seconds);
    sweepSeconds.push(seconds);
    captured = Number(line.captured);
    unknown = JSON.stringify({ byCause: line.unknownByCause, examples: line.unknownExamples });
    // The sweep's CPU: what the agent spent since `before`, less its idle rate over the wait.
    const idle = ((performance.now() - before.at) / 1000 - seconds) * idleCpuMsPerSecond;
    sweepCpuMsPerPod.push(Math.max(0, cpuOf(pid).self - before.cpu - idle) / pods);
  }
  return {
    pods,
    sweepSeconds,
    captured,
    unknown,
    idleCpuMsPerSecond,
    sweepCpuMsPerPod,
    childCpuMsPerPod: cpuOf(pid).children / (pods * sweeps),
    idleRssMiB,
    peakRssMiB: hwmMiB(pid),
  };
}
