import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../../test/harness/kube-api/kubeconfig.js';
import { nodeObject } from '../../test/harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../../test/harness/kube-api/server.js';
import { ambientGolden, HEAD_TAG, restoreTexts, ZTUNNEL_STANDIN } from '../../test/harness/ambient-goldens.js';
import { startBusyLoops, steppedClock } from '../../test/harness/starvation.js';
import { captureOutput, metric, waitFor } from '../../test/node-agent/agent-process.js';
import { run } from '../cni/containerd-node.js';
import type { CriNode } from './cri-node.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec } from './kubelet/pod-spec.js';
import { ApiPublisher } from './kubelet/publisher.js';
import { ReplicaSetStandIn } from './replica-set.js';
import { APP, bridge, conflist, manifestContainer, meshPlugin, MESH_RULES, portmap, type Mesh } from './scenario.js';
import { startNode } from './suite-node.js';

// The re-check on a real runtime: pods of both meshes run through containerd's CRI with the mesh
// CNI stand-in writing their rules; the real `interlock node --recheck-interval` finds each pod's
// network namespace through the CRI socket, reads its rules in a child that entered it, and
// reports to the API stand-in. The agent runs in containerd's mount namespace, where the pods'
// namespace files are mounted, as the printed DaemonSet sees the host's /run/netns.
const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const INTERVAL_MS = 2000;
let node: CriNode;
let api: KubeApi;
let kubelet: Kubelet;
let dir: string;
let kubeconfig: string;
let mountNs: string;
const validators = {} as Record<Mesh, ContainerSpec>;
const sets: ReplicaSetStandIn[] = [];
const agents: ChildProcess[] = [];

/** containerd's own pid, found by the mount namespace the node recorded (never by name alone). */
function containerdMountNs(): string {
  const recorded = readFileSync(join(node.root, 'mntns'), 'utf8');
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readlinkSync(`/proc/${pid}/ns/mnt`) !== recorded) continue;
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'containerd') return `/proc/${pid}/ns/mnt`;
    } catch {
      // gone
    }
  }
  throw new Error('containerd is not running');
}

let networks = 150;
async function cni(mesh: Mesh): Promise<void> {
  networks += 1;
  await node.writeConfig('10-primary.conflist', conflist([bridge(node, networks), portmap, meshPlugin(mesh)]));
  await node.waitCniLoaded(new RegExp(`ilkcri${networks}\\b`));
}

async function meshedPod(mesh: Mesh, name: string, maxPods = 1): Promise<{ set: ReplicaSetStandIn; run: PodRun }> {
  await cni(mesh);
  const set = new ReplicaSetStandIn(api, kubelet, name, `rs-${name}-uid`, [validators[mesh]], [APP], maxPods, () =>
    cni(mesh),
  );
  sets.push(set);
  const started = await set.create();
  expect(await started.outcome).toMatchObject({ kind: 'running' });
  return { set, run: started };
}

/** The pod's network namespace path, as the runtime reports it. */
async function netnsOf(podRun: PodRun): Promise<string> {
  const status = await node.cri.call('PodSandboxStatus', { pod_sandbox_id: podRun.sandboxId, verbose: true });
  const info = JSON.parse((status['info'] as Record<string, string>)['info']!) as {
    runtimeSpec: { linux: { namespaces: Array<{ type: string; path?: string }> } };
  };
  return info.runtimeSpec.linux.namespaces.find((entry) => entry.type === 'network')!.path!;
}

async function inPod(podRun: PodRun, command: string[], input?: string): Promise<void> {
  const path = await netnsOf(podRun);
  // nsenter opens every namespace file before entering any: the pod's is reached from containerd's mount namespace.
  const args = [`--mount=${mountNs}`, 'nsenter', `--net=${path}`, ...command];
  const result = input === undefined ? await run('nsenter', args) : await runWithInput('nsenter', args, input);
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')}: ${result.stderr}`);
}

function runWithInput(file: string, args: string[], input: string): Promise<{ exitCode: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ exitCode: code ?? -1, stderr }));
    child.stdin.end(input);
  });
}

/**
 * Istio ambient: istio-cni's node agent (the stand-in) writes its own golden rules into the pod,
 * with the ip rule, table 100 and the ztunnel stand-in. The pod carries only ambient's label, as
 * upstream enrols it: no sidecar and no validator, so the label alone makes the agent check it.
 */
const AMBIENT_LABEL = { 'istio.io/dataplane-mode': 'ambient' } as const;
const ambientRules = () => restoreTexts(ambientGolden(HEAD_TAG, 'iptables', 'default')).ipv4;
async function ambientCni(rulesFile: string): Promise<void> {
  networks += 1;
  const plugin = { type: 'istio-cni', stateDir: node.root, rulesFile, markRoute: true, ztunnel: ZTUNNEL_STANDIN };
  await node.writeConfig('10-primary.conflist', conflist([bridge(node, networks), portmap, plugin]));
  await node.waitCniLoaded(new RegExp(`ilkcri${networks}\\b`));
}

async function ambientPod(name: string): Promise<PodRun> {
  const rulesFile = join(dir, 'ambient-rules.v4.txt');
  writeFileSync(rulesFile, ambientRules());
  await ambientCni(rulesFile);
  const set = new ReplicaSetStandIn(
    api,
    kubelet,
    name,
    `rs-${name}-uid`,
    [],
    [APP],
    1,
    () => ambientCni(rulesFile),
    AMBIENT_LABEL,
  );
  sets.push(set);
  const started = await set.create();
  expect(await started.outcome).toMatchObject({ kind: 'running' });
  return started;
}

const flush = (podRun: PodRun) => inPod(podRun, ['iptables-nft', '-t', 'nat', '-F']);
const restore = (podRun: PodRun, mesh: Mesh) =>
  inPod(podRun, ['iptables-nft-restore'], readFileSync(MESH_RULES[mesh], 'utf8'));

interface Agent {
  readonly logs: Record<string, unknown>[];
  metrics(): Promise<string>;
  sweeps(): Promise<number>;
}

/** The real agent, in containerd's mount namespace, optionally under a prefix (setpriv) as printed. */
async function startAgent(
  args: readonly string[],
  prefix: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<Agent> {
  const command = ['nsenter', `--mount=${mountNs}`, ...prefix, process.execPath, MAIN, 'node', '--node-name', 'node-a'];
  const child = spawn(command[0]!, [...command.slice(1), '--mesh', 'linkerd', '--listen', '127.0.0.1:0', ...args], {
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agents.push(child);
  const { logs, stderr } = captureOutput(child);
  const started = await waitFor(
    `the agent to start (stderr: ${stderr()})`,
    () => logs.find((l) => l.msg === 'node agent started'),
    20_000,
  );
  const base = `http://${String(started.listen)}`;
  const metrics = async () => (await fetch(`${base}/metrics`)).text();
  return { logs, metrics, sweeps: async () => metric(await metrics(), 'interlock_node_recheck_sweeps_total') };
}

/** Where this node's containerd mounts pods' namespaces: under its state (netns_mounts_under_state_dir). */
const netnsDir = () => join(node.root, 'containerd-state/io.containerd.grpc.v1.cri/netns');
const recheck = (extra: readonly string[] = []) => [
  '--recheck-interval',
  `${INTERVAL_MS}ms`,
  '--cri-endpoint',
  `unix://${node.socket}`,
  '--netns-dir',
  netnsDir(),
  ...extra,
];
const captureLost = (name: string) =>
  api.store
    .list('events')
    .filter(
      (event) => event['reason'] === 'CaptureLost' && (event['involvedObject'] as { name?: string }).name === name,
    );
const allCaptureLost = () => api.store.list('events').filter((event) => event['reason'] === 'CaptureLost');
const until = async (agent: Agent, sweeps: number) => {
  const target = (await agent.sweeps()) + sweeps;
  await waitFor(
    `${sweeps} more sweeps`,
    async () => (await agent.sweeps()) >= target,
    sweeps * INTERVAL_MS * 4 + 10_000,
  );
};

/** A pipeline as the operator types it, with the real kubectl. */
async function kubectlPipeline(
  script: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', script, 'pipeline', ...args], {
      env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: dir },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    return { code: 1, stdout: '', stderr: String((error as { stderr?: string }).stderr ?? error) };
  }
}

let linkerdA: PodRun;
let linkerdB: PodRun;
let istioA: PodRun;

beforeAll(async () => {
  execFileSync('bash', [new URL('../../scripts/ensure-kubectl.sh', import.meta.url).pathname], { stdio: 'ignore' });
  node = await startNode();
  mountNs = containerdMountNs();
  api = await startKubeApi();
  api.store.put('nodes', nodeObject('node-a'));
  // The re-check reads the pods' Namespace (ambient's label, Linkerd's annotations), as in a cluster.
  if (!api.store.get('namespaces', undefined, 'default'))
    api.store.put('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  dir = mkdtempSync(join(tmpdir(), 'interlock-cri-recheck-'));
  kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new ApiPublisher(api.url, 'node-a') });
  validators.linkerd = await manifestContainer('linkerd');
  validators.istio = await manifestContainer('istio');
  linkerdA = (await meshedPod('linkerd', 'la')).run;
  linkerdB = (await meshedPod('linkerd', 'lb')).run;
  istioA = (await meshedPod('istio', 'ia')).run;
}, 300_000);
afterEach(() => {
  for (const child of agents.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  for (const set of sets.splice(0)) {
    await set.close();
    await Promise.all(set.runs.map((podRun) => podRun.stop()));
  }
  await node?.stop();
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the re-check through the CRI', () => {
  it('finds every meshed pod captured, then reports the one whose nat rules were flushed, once, and sees it restored', async () => {
    const agent = await startAgent(recheck());
    await until(agent, 2);
    const sweepLines = agent.logs.filter((line) => line.msg === 're-check sweep finished');
    expect(
      sweepLines.map((line) => [line.captured, line.unknownByCause]),
      JSON.stringify(sweepLines[0]?.unknownExamples),
    ).toEqual([
      [3, {}],
      [3, {}],
    ]);
    expect(metric(await agent.metrics(), 'interlock_node_recheck_pods_total{result="lost"}')).toBe(0);
    await flush(linkerdA);
    const flushedAt = Date.now();
    const event = await waitFor(
      'CaptureLost on the flushed pod',
      () => captureLost(linkerdA.pod.metadata.name)[0],
      4 * INTERVAL_MS + 5000,
    );
    // Two sweeps must agree: at least one interval after the flush, within two intervals and a sweep.
    expect(Date.now() - flushedAt).toBeLessThan(3 * INTERVAL_MS + 4000);
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { uid: linkerdA.pod.metadata.uid } });
    expect(String(event['message'])).toMatch(
      /^Capture lost after the pod started \(linkerd; two sweeps agree\): .*expected/,
    );
    expect(metric(await agent.metrics(), 'interlock_node_capture_lost_pods{mesh="linkerd"}')).toBe(1);
    expect(allCaptureLost()).toHaveLength(1);
    // Where operators look: kubectl describe pod shows the Warning.
    const described = await kubectlPipeline('kubectl describe pod "$1" -n default', [linkerdA.pod.metadata.name]);
    expect(described.stdout, described.stderr).toMatch(/Warning\s+CaptureLost\s+.*Capture lost after the pod started/);
    await restore(linkerdA, 'linkerd');
    await until(agent, 2);
    expect(metric(await agent.metrics(), 'interlock_node_capture_lost_pods{mesh="linkerd"}')).toBe(0);
    expect(allCaptureLost()).toHaveLength(1);
    expect(agent.logs.some((line) => line.msg === 'capture is back: the re-check finds the rules in place again')).toBe(
      true,
    );
    void istioA;
  });

  it('a pod whose sandbox goes away mid-loss is unknown, never reported', async () => {
    const agent = await startAgent(recheck());
    await until(agent, 1);
    const lostBefore = metric(await agent.metrics(), 'interlock_node_recheck_pods_total{result="lost"}');
    await flush(linkerdB);
    await waitFor(
      'one sweep to find it lost',
      async () => metric(await agent.metrics(), 'interlock_node_recheck_pods_total{result="lost"}') > lostBefore,
      4 * INTERVAL_MS + 5000,
    );
    // The kubelet removes the sandbox; the API still says Running (its status not yet updated).
    await node.cri.call('StopPodSandbox', { pod_sandbox_id: linkerdB.sandboxId });
    await node.cri.call('RemovePodSandbox', { pod_sandbox_id: linkerdB.sandboxId });
    await until(agent, 3);
    expect(captureLost(linkerdB.pod.metadata.name)).toEqual([]);
    expect(metric(await agent.metrics(), 'interlock_node_recheck_unknown_total{cause="no-sandbox"}')).toBeGreaterThan(
      0,
    );
  });

  it('a runtime that is down or hung: logged and counted, no pod reported', async () => {
    const hungPath = join(dir, 'hung.sock');
    const hung: Server = createServer(() => undefined).listen(hungPath);
    try {
      for (const socket of [join(dir, 'stopped.sock'), hungPath]) {
        const before = allCaptureLost().length;
        const agent = await startAgent([
          '--recheck-interval',
          `${INTERVAL_MS}ms`,
          '--cri-endpoint',
          `unix://${socket}`,
        ]);
        await until(agent, 2);
        const text = await agent.metrics();
        const unknown =
          metric(text, 'interlock_node_recheck_unknown_total{cause="runtime-unreachable"}') +
          metric(text, 'interlock_node_recheck_unknown_total{cause="runtime-timeout"}');
        expect(unknown).toBeGreaterThanOrEqual(2);
        expect(metric(text, 'interlock_node_recheck_pods_total{result="lost"}')).toBe(0);
        expect(allCaptureLost().length).toBe(before);
        expect(agent.logs.some((line) => line.msg === 're-check sweep finished' && Number(line.unknown) > 0)).toBe(
          true,
        );
      }
    } finally {
      hung.close();
    }
  });

  it('healthy pods are never flagged over 20 sweeps, with the CPU starved and the wall clock stepped', async () => {
    const clock = steppedClock();
    const agent = await startAgent(
      ['--recheck-interval', '1s', '--cri-endpoint', `unix://${node.socket}`, '--netns-dir', netnsDir()],
      [],
      clock.env,
    );
    const busy = startBusyLoops(24, 60_000);
    const steps = setInterval(() => clock.step(Math.random() < 0.5 ? '+3600' : '-3600'), 2500);
    try {
      const target = (await agent.sweeps()) + 20;
      await waitFor('20 sweeps', async () => (await agent.sweeps()) >= target, 120_000);
    } finally {
      clearInterval(steps);
      busy.stop();
      clock.remove();
    }
    const text = await agent.metrics();
    expect(metric(text, 'interlock_node_recheck_pods_total{result="lost"}')).toBe(0);
    // The healthy pods (one Linkerd, one Istio) were checked and found captured throughout.
    expect(metric(text, 'interlock_node_recheck_pods_total{result="captured"}')).toBeGreaterThanOrEqual(30);
    expect(metric(text, 'interlock_node_capture_lost_pods{mesh="linkerd"}')).toBe(0);
    expect(metric(text, 'interlock_node_capture_lost_pods{mesh="istio"}')).toBe(0);
  }, 180_000);

  it('an Istio ambient pod (its label only) is found captured, reported once its rules are flushed, seen restored, then its listeners gone', async () => {
    const agent = await startAgent(recheck());
    await until(agent, 1);
    const sweepLines = () => agent.logs.filter((line) => line.msg === 're-check sweep finished');
    const baseline = sweepLines().at(-1)!;
    const eventsBefore = allCaptureLost().length;
    const ambient = await ambientPod('amb');
    const name = ambient.pod.metadata.name;
    // Three: the sweep under way when the pod turned Running may have listed it before.
    await until(agent, 3);
    // Checked and found captured by the ambient expectation: one more captured, the unknowns as before.
    const latest = sweepLines().slice(-2);
    expect(
      latest.map((line) => [line.captured, line.unknownByCause]),
      JSON.stringify(latest.map((line) => line.unknownExamples)),
    ).toEqual([
      [Number(baseline.captured) + 1, baseline.unknownByCause],
      [Number(baseline.captured) + 1, baseline.unknownByCause],
    ]);
    expect(allCaptureLost()).toHaveLength(eventsBefore);
    // Both tables istio-cni writes a redirect or mark into: nothing of the capture is left.
    await inPod(ambient, ['iptables-nft', '-t', 'nat', '-F']);
    await inPod(ambient, ['iptables-nft', '-t', 'mangle', '-F']);
    const flushedAt = Date.now();
    const event = await waitFor('CaptureLost on the ambient pod', () => captureLost(name)[0], 4 * INTERVAL_MS + 5000);
    expect(Date.now() - flushedAt).toBeLessThan(3 * INTERVAL_MS + 4000);
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { uid: ambient.pod.metadata.uid } });
    expect(String(event['message'])).toMatch(
      /^Capture lost after the pod started \(istio-ambient; two sweeps agree\): .*expected/,
    );
    const lostText = await agent.metrics();
    expect(metric(lostText, 'interlock_node_capture_lost_pods{mesh="istio-ambient"}')).toBe(1);
    expect(metric(lostText, 'interlock_node_capture_lost_pods{mesh="istio"}')).toBe(0);
    expect(metric(lostText, 'interlock_node_capture_lost_pods{mesh="linkerd"}')).toBe(0);
    // On no other pod: the one new CaptureLost is the ambient pod's.
    expect(allCaptureLost().slice(eventsBefore)).toEqual([event]);
    await inPod(ambient, ['iptables-nft-restore'], ambientRules());
    await until(agent, 2);
    expect(metric(await agent.metrics(), 'interlock_node_capture_lost_pods{mesh="istio-ambient"}')).toBe(0);
    expect(allCaptureLost().slice(eventsBefore)).toEqual([event]);
    expect(
      agent.logs.some(
        (line) =>
          line.msg === 'capture is back: the re-check finds the rules in place again' && line.pod === `default/${name}`,
      ),
    ).toBe(true);
    // istio/istio#57285: the rules stay, ztunnel goes. Its stand-in killed, nothing listens in the
    // pod: the real agent reads the pod's sockets through its nsenter child and reports the outage
    // under ZtunnelNotListening, never as a second CaptureLost.
    const pidFiles = readdirSync(node.root).filter((file) => /^ztunnel-.*\.pid$/.test(file));
    expect(pidFiles).toHaveLength(1);
    process.kill(Number(readFileSync(join(node.root, pidFiles[0]!), 'utf8')), 'SIGKILL');
    const listenersGone = await waitFor(
      'ZtunnelNotListening on the ambient pod',
      () =>
        api.store
          .list('events')
          .find(
            (event) =>
              event['reason'] === 'ZtunnelNotListening' && (event['involvedObject'] as { name?: string }).name === name,
          ),
      4 * INTERVAL_MS + 5000,
    );
    expect(listenersGone).toMatchObject({ type: 'Warning', involvedObject: { uid: ambient.pod.metadata.uid } });
    expect(String(listenersGone['message'])).toMatch(
      /^ztunnel's listeners gone after the pod started \(istio-ambient; two sweeps agree\): .*nothing listens on ports 15001, 15006, 15008/,
    );
    expect(metric(await agent.metrics(), 'interlock_node_capture_lost_pods{mesh="istio-ambient"}')).toBe(1);
    expect(allCaptureLost().slice(eventsBefore)).toEqual([event]);
  });
});

describe('--recheck-action delete', () => {
  it('recreates the lost pod through its controller, and the backoff bounds it', async () => {
    const { set, run: first } = await meshedPod('linkerd', 'del', 3);
    const agent = await startAgent(recheck(['--recheck-action', 'delete', '--max-recreations', '1']));
    await until(agent, 1);
    await flush(first);
    const second = await waitFor('the replacement', () => set.runs[1], 6 * INTERVAL_MS + 20_000);
    const deletion = api.requests.find(
      (request) => request.method === 'DELETE' && request.path.endsWith(`/pods/${first.pod.metadata.name}`),
    );
    expect(deletion?.body).toMatchObject({ preconditions: { uid: first.pod.metadata.uid } });
    expect(await second.outcome).toMatchObject({ kind: 'running' });
    const reasons = api.store
      .list('events')
      .filter((event) => (event['involvedObject'] as { name?: string }).name === first.pod.metadata.name)
      .map((event) => event['reason']);
    expect(reasons).toEqual(expect.arrayContaining(['CaptureLost', 'InterlockRecreating']));
    // The replacement loses its capture too: the owner's one recreation is spent, so it is only reported.
    await flush(second);
    await waitFor(
      'the recreate limit',
      () =>
        api.store
          .list('events')
          .find(
            (event) =>
              event['reason'] === 'InterlockRecreateLimit' &&
              (event['involvedObject'] as { name?: string }).name === second.pod.metadata.name,
          ),
      6 * INTERVAL_MS + 10_000,
    );
    expect(set.runs).toHaveLength(2);
  });
});

describe('the printed privileged DaemonSet', () => {
  it('applies with kubectl, and its agent, started as printed, finds and checks the pods', async () => {
    const args = [
      '--node-agent',
      '--mesh',
      'linkerd',
      '--image',
      'registry.example/interlock:1.0',
      '--recheck-interval',
      '2s',
      '--cri-endpoint',
      `unix://${node.socket}`,
      '--netns-dir',
      netnsDir(),
    ];
    const applied = await kubectlPipeline(`"${process.execPath}" "${MAIN}" manifest "$@" | kubectl apply -f -`, args);
    expect(applied.code, applied.stderr).toBe(0);
    const daemonSet = api.store.get('daemonsets', 'interlock-system', 'interlock-node-linkerd')!;
    const pod = (daemonSet['spec'] as { template: { spec: Record<string, unknown> } }).template.spec;
    const container = (pod['containers'] as Array<Record<string, unknown>>)[0]!;
    const security = container['securityContext'] as { runAsUser: number; capabilities: { add: string[] } };
    const mounts = container['volumeMounts'] as Array<{ mountPath: string; readOnly: boolean }>;
    expect(security.runAsUser).toBe(0);
    expect(mounts.every((mount) => mount.readOnly)).toBe(true);
    expect(mounts.map((mount) => mount.mountPath)).toEqual(expect.arrayContaining([node.socket, netnsDir()]));
    const role = api.store.get('clusterroles', undefined, 'interlock-node-linkerd')!;
    expect(JSON.stringify(role['rules'])).toContain('namespaces');
    // As printed: its uid, only its capabilities (bounding and ambient), its args.
    const caps = security.capabilities.add.map((cap) => `+${cap.toLowerCase()}`).join(',');
    const prefix = [
      'setpriv',
      `--reuid=${security.runAsUser}`,
      `--regid=${security.runAsUser}`,
      '--clear-groups',
      `--inh-caps=-all,${caps}`,
      `--ambient-caps=${caps}`,
      `--bounding-set=-all,${caps}`,
    ];
    const printedArgs = (container['args'] as string[]).filter(
      (arg) => !arg.startsWith('--listen') && !arg.startsWith('--mesh') && arg !== 'node',
    );
    expect(existsSync(node.socket)).toBe(true);
    const agent = await startAgent(printedArgs, prefix);
    await until(agent, 2);
    const text = await agent.metrics();
    expect(metric(text, 'interlock_node_recheck_pods_total{result="captured"}')).toBeGreaterThan(0);
    expect(metric(text, 'interlock_node_recheck_unknown_total{cause="rules-unreadable"}')).toBe(0);
  });
});
