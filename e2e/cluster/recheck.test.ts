import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshNamespace,
  IMAGE,
  interlock,
  kubectl,
  linkerdDeployment,
  LINKERD_RULES,
  LINKERD_VALIDATOR,
  podsOf,
  setChain,
  STATE,
  waitFor,
} from './cluster.js';
import { installAgent } from './install.js';
import { nodeAgentMetricsPort } from '../../src/node-agent/manifest.js';

// The re-check on a real node: the agent as `manifest --node-agent --recheck-interval` prints it
// (the privileged variant) finds a running Linkerd pod's namespace through the cluster's containerd
// (CRI), reads its rules there, and once they are flushed posts CaptureLost on the pod, which
// `kubectl describe` shows; once they are written back, it posts nothing new. Time is counted in the
// agent's own sweeps (its metrics), not in seconds: a loaded machine slows both alike.
const NS = 'ilk-recheck';
const INTERVAL = '2s';
const SOCKET = join(STATE, 'containerd.sock');
/** containerd's netns_mounts_under_state_dir (scripts/cluster-config.sh): pods' namespaces live here. */
const NETNS_DIR = join(STATE, 'containerd-state', 'io.containerd.grpc.v1.cri', 'netns');
// The linkerd agent's own port on the node's host network (one agent per mesh, each its own port).
const METRICS = `http://10.231.0.2:${nodeAgentMetricsPort('linkerd')}/metrics`;

let agent: string | undefined;

/** The node's mount namespace (scripts/cluster-node.sh records it): where the pods' namespaces are mounted. */
const nodeMounts = (): string => {
  const containerd = execFileSync('pgrep', ['-f', `containerd --config ${join(STATE, 'containerd.toml')}`], {
    encoding: 'utf8',
  }).split('\n')[0];
  return `/proc/${containerd}/ns/mnt`;
};

/** The pod's sandbox namespace path, as containerd holds it (what the agent asks it through the CRI). */
function sandboxNetns(uid: string): string {
  const ctr = (args: string[]) =>
    execFileSync('ctr', ['-a', SOCKET, '-n', 'k8s.io', ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
  const ids = ctr(['containers', 'ls', '-q', `labels."io.kubernetes.pod.uid"==${uid}`])
    .split('\n')
    .filter(Boolean);
  for (const id of ids) {
    const info = JSON.parse(ctr(['containers', 'info', id])) as {
      Spec?: { linux?: { namespaces?: Array<{ type: string; path?: string }> } };
    };
    const path = info.Spec?.linux?.namespaces?.find((ns) => ns.type === 'network')?.path;
    if (path?.startsWith(`${NETNS_DIR}/`)) return path;
  }
  throw new Error(`no sandbox of pod uid ${uid} with a namespace under ${NETNS_DIR}`);
}

/** A command in the pod's network namespace, from the node's mount namespace (the machine never). */
const inPod = (netns: string, command: string[], input?: Buffer) =>
  // Two steps: nsenter opens every namespace file before it enters any, and the pod's exists only there.
  execFileSync('nsenter', [`--mount=${nodeMounts()}`, 'nsenter', `--net=${netns}`, ...command], {
    ...(input ? { input } : {}),
    stdio: ['pipe', 'pipe', 'pipe'],
  });

/** The agent's own figure, summed over its labels (a gauge by mesh has no sample until it is set). */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(METRICS)).text();
  return text
    .split('\n')
    .filter((row) => row.startsWith(`${name} `) || row.startsWith(name.includes('{') ? name : `${name}{`))
    .reduce((sum, row) => sum + Number(row.slice(row.lastIndexOf(' ') + 1)), 0);
}
const sweeps = () => metric('interlock_node_recheck_sweeps_total');

interface PodEvent {
  readonly reason: string;
  readonly message: string;
  readonly count?: number;
  readonly series?: { readonly count: number };
}
async function captureLost(pod: string): Promise<PodEvent[]> {
  const list = JSON.parse(
    await kubectl([
      ...['get', 'events', '-n', NS, '-o', 'json'],
      `--field-selector=involvedObject.name=${pod},reason=CaptureLost`,
    ]),
  ) as { items: PodEvent[] };
  return list.items;
}

/** Waits until the agent has finished `more` sweeps after now. */
async function sweepsPass(more: number): Promise<void> {
  const from = await sweeps();
  await waitFor(`${more} more sweeps after ${from}`, async () => (await sweeps()) >= from + more, 120_000);
}

beforeAll(async () => {
  setChain(LINKERD_RULES);
  agent = await installAgent([
    ...['--recheck-interval', INTERVAL],
    ...['--cri-endpoint', `unix://${SOCKET}`, '--netns-dir', NETNS_DIR],
  ]);
  await freshNamespace(NS);
}, 300_000);
afterAll(async () => {
  setChain(undefined);
  await kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
  // Waited for: the next file may install the agent again, and a terminating namespace refuses it.
  if (agent) await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=120s'], agent).catch(() => undefined);
}, 300_000);

describe('the node agent re-check, on a real node', () => {
  it('posts CaptureLost within two sweeps of a flush, shown by kubectl describe; restored, nothing new', async () => {
    const deployment = linkerdDeployment('web', NS);
    await kubectl(['apply', '-f', '-'], await interlock(['inject', '--mesh', 'linkerd', '--image', IMAGE], deployment));
    const pod = await waitFor(
      'the meshed pod running, its validator passed',
      async () =>
        (await podsOf(NS, 'app=web')).find(
          (p) =>
            p.status.phase === 'Running' &&
            p.status.containerStatuses?.every((c) => c.ready) &&
            p.status.initContainerStatuses?.find((c) => c.name === LINKERD_VALIDATOR)?.restartCount === 0,
        ),
      240_000,
    );
    const name = pod.metadata.name;
    const netns = sandboxNetns(pod.metadata.uid);
    // Captured as the plugin wrote it: sweeps pass and say nothing.
    const captured = await metric('interlock_node_recheck_pods_total{result="captured"}');
    await sweepsPass(3);
    expect(await metric('interlock_node_recheck_pods_total{result="captured"}')).toBeGreaterThanOrEqual(captured + 2);
    expect(await captureLost(name)).toEqual([]);
    expect(await metric('interlock_node_capture_lost_pods')).toBe(0);

    inPod(netns, ['iptables-nft', '-t', 'nat', '-F']);
    const flushedAt = await sweeps();
    const event = await waitFor('a CaptureLost Event on the pod', async () => (await captureLost(name))[0], 120_000);
    // The sweep running at the flush may have read before it; the next two agree on the loss.
    expect((await sweeps()) - flushedAt).toBeLessThanOrEqual(3);
    expect(event.message).toMatch(/not redirected|PROXY_INIT/);
    const described = await kubectl(['describe', 'pod', '-n', NS, name]);
    expect(described).toMatch(/Warning\s+CaptureLost\s/);
    expect(await metric('interlock_node_capture_lost_pods')).toBe(1);

    inPod(netns, ['iptables-nft-restore'], readFileSync(LINKERD_RULES));
    await waitFor('the gauge back to 0', async () => (await metric('interlock_node_capture_lost_pods')) === 0, 60_000);
    await sweepsPass(2);
    const after = await captureLost(name);
    expect(after).toHaveLength(1);
    expect(after[0]?.count ?? 1).toBe(event.count ?? 1);
    expect(after[0]?.series).toEqual(event.series);
  });
});
