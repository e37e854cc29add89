import { execFile, execFileSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import { crashLoopPod, nodeObject } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi, type RequestRecord } from '../harness/kube-api/server.js';
import { startAgent, waitFor, type AgentProcess } from './agent-process.js';

// Issue 12's S6 with the node agent: the real `interlock node --cni-audit --taint` (dist/) watches a
// CNI directory built from Debian's real plugins and the mesh stand-in, against the API stand-in.
const STANDIN = fileURLToPath(new URL('../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
/** Debian's containernetworking-plugins (scripts/ensure-containerd.sh). */
const PLUGINS = '/usr/lib/cni';
const PRIMARY = '10-bridge.conflist';
const TAINT_KEY = 'interlock.dev/cni-not-ready';
const WINDOW_MS = 3000;
/** Bounds every wait: the 30 s periodic re-check is beyond it, so a file event must drive each change. */
const WAIT_MS = 20_000;

interface NodeEvent {
  readonly reason: string;
  readonly message: string;
  readonly type: string;
  readonly involvedObject: { readonly kind: string; readonly name: string };
}
interface Taint {
  readonly key: string;
  readonly effect: string;
}

let api: KubeApi;
let agent: AgentProcess | undefined;
let root: string;
let confDir: string;
let kubeconfig: string;

/** The primary's conflist (bridge + host-local), with linkerd-cni appended as its installer does, or not. */
function primaryConflist(withMesh: boolean): string {
  const bridge = {
    type: 'bridge',
    bridge: 'cni0',
    isGateway: true,
    ipMasq: true,
    ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.0.0/16' }]], routes: [{ dst: '0.0.0.0/0' }] },
  };
  const mesh = {
    name: 'linkerd-cni',
    type: 'linkerd-cni',
    log_level: 'info',
    linkerd: { 'incoming-proxy-port': 4143, 'outgoing-proxy-port': 4140, 'proxy-uid': 2102 },
  };
  return `${JSON.stringify({ cniVersion: '1.0.0', name: 'bridge-net', plugins: withMesh ? [bridge, mesh] : [bridge] }, null, 2)}\n`;
}

/** The primary rewrites its file, atomically (write aside, rename over): returns when, just before the rename. */
async function rewritePrimary(withMesh: boolean): Promise<number> {
  const staged = join(root, `staged-${PRIMARY}`);
  await writeFile(staged, primaryConflist(withMesh));
  const at = Date.now();
  await rename(staged, join(confDir, PRIMARY));
  return at;
}

async function makeNodeDirs(): Promise<{ binDir: string }> {
  root = await mkdtemp(join(tmpdir(), `interlock-cni-audit-${process.pid}-`));
  confDir = join(root, 'net.d');
  const binDir = join(root, 'bin');
  await mkdir(confDir);
  await mkdir(binDir);
  for (const plugin of ['bridge', 'host-local', 'loopback'])
    await copyFile(join(PLUGINS, plugin), join(binDir, plugin));
  await copyFile(STANDIN, join(binDir, 'linkerd-cni'));
  await chmod(join(binDir, 'linkerd-cni'), 0o755);
  await writeFile(join(confDir, PRIMARY), primaryConflist(true));
  return { binDir };
}

const nodeEvents = (): NodeEvent[] =>
  (api.store.list('events') as unknown as NodeEvent[]).filter(
    (event) => event.involvedObject.kind === 'Node' && event.involvedObject.name === 'node-a',
  );
const eventsOf = (reason: string): NodeEvent[] => nodeEvents().filter((event) => event.reason === reason);
const cniEvents = (): string[] =>
  nodeEvents()
    .filter((event) => event.reason.startsWith('InterlockCniConfig'))
    .map((event) => event.reason);
function taints(): readonly Taint[] {
  const spec = api.store.get('nodes', undefined, 'node-a')?.spec as { taints?: Taint[] } | undefined;
  return spec?.taints ?? [];
}
const tainted = (): boolean => taints().some((taint) => taint.key === TAINT_KEY && taint.effect === 'NoSchedule');
const nodePatches = (): RequestRecord[] =>
  api.requests.filter(
    (request) => request.method === 'PATCH' && request.path === '/api/v1/nodes/node-a' && request.status === 200,
  );

/** A gauge's value, undefined while the series is absent (the audit's: no verdict yet). */
async function gauge(name: string): Promise<number | undefined> {
  const line = (await agent!.metrics()).split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}
const auditGauge = (): Promise<number | undefined> => gauge('interlock_node_cni_audit_healthy');
const breakerGauge = (): Promise<number | undefined> => gauge('interlock_node_breaker_open');

// Asynchronous: the stand-in answers from this very process.
const kubectl = async (...args: string[]): Promise<string> =>
  (
    await promisify(execFile)('kubectl', args, {
      env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: root },
      encoding: 'utf8',
      timeout: 30_000,
    })
  ).stdout;

beforeAll(async () => {
  execFileSync('bash', [join(SCRIPTS, 'ensure-containerd.sh')], { stdio: 'ignore' });
  execFileSync('bash', [join(SCRIPTS, 'ensure-kubectl.sh')], { stdio: 'ignore' });
  const { binDir } = await makeNodeDirs();
  api = await startKubeApi({ bookmarkMs: 200 });
  api.store.put('nodes', nodeObject('node-a'));
  kubeconfig = writeKubeconfig(join(root, 'kubeconfig'), api.url);
  agent = await startAgent(api, [
    '--cni-audit',
    '--taint',
    '--cni-conf-dir',
    confDir,
    '--cni-bin-dir',
    binDir,
    '--breaker-window',
    `${WINDOW_MS / 1000}s`,
    '--trusted-image',
    'mesh-interlock',
  ]);
});

afterAll(async () => {
  if (agent) {
    const stopping = agent.terminate();
    await Promise.race([stopping, new Promise((resolve) => setTimeout(resolve, 6000))]);
    agent.kill();
  }
  await api?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('interlock node --cni-audit --taint: S6, the primary drops the mesh entry after the audit said healthy', () => {
  it('1. healthy directory: ready, the gauge is 1, no taint and no CNI Event', async () => {
    await waitFor('readyz', async () => (await fetch(`${agent!.base}/readyz`)).status === 200, WAIT_MS);
    await waitFor('the first (healthy) verdict on /metrics', async () => (await auditGauge()) === 1, WAIT_MS);
    expect(tainted()).toBe(false);
    expect(nodePatches()).toEqual([]);
    expect(cniEvents()).toEqual([]);
    expect(eventsOf('InterlockBreakerOpen')).toEqual([]);
  });

  it('2. the primary rewrites its conflist without linkerd-cni: a Broken Event naming the file and the gauge 0, but the audit alone opens nothing', async () => {
    const rewrittenAt = await rewritePrimary(false);
    const [broken] = await waitFor(
      'the InterlockCniConfigBroken Event',
      () => {
        const found = eventsOf('InterlockCniConfigBroken');
        return found.length > 0 && found;
      },
      WAIT_MS,
    );
    expect(broken).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Node', name: 'node-a' } });
    expect(broken!.message).toMatch(
      /^CNI configuration audit failed: containerd loads 10-bridge\.conflist, whose chain \[bridge\] has no linkerd-cni/,
    );
    expect(await auditGauge()).toBe(0);
    // A prediction, not an observation: two windows of breaker ticks later, no breaker and no taint.
    await new Promise((resolve) => setTimeout(resolve, 2 * WINDOW_MS));
    expect(eventsOf('InterlockBreakerOpen')).toEqual([]);
    expect(tainted()).toBe(false);
    expect(await breakerGauge()).toBe(0);
    expect(nodePatches().filter((patch) => patch.at >= rewrittenAt)).toEqual([]);
  });

  it('2a. one trusted validator failure on the node confirms the audit: the breaker opens, the taint', async () => {
    const failedAt = Date.now();
    api.store.put(
      'pods',
      crashLoopPod({
        name: 'web-0',
        ownerUid: 'owner-web',
        image: 'mesh-interlock:dev',
        finishedAt: new Date().toISOString(),
      }),
    );
    const [opened] = await waitFor(
      'the InterlockBreakerOpen Event',
      () => {
        const found = eventsOf('InterlockBreakerOpen');
        return found.length > 0 && found;
      },
      WAIT_MS,
    );
    expect(opened!.message).toContain('CNI audit: containerd loads 10-bridge.conflist');
    expect(opened!.message).toContain('confirmed by a validator failure');
    await waitFor(`the taint ${TAINT_KEY}:NoSchedule`, tainted, WAIT_MS);
    expect(nodePatches().every((patch) => patch.at >= failedAt)).toBe(true);
    expect(await auditGauge()).toBe(0);
    expect(await breakerGauge()).toBe(1);
    // The healthy first verdict posted nothing: the Broken one is the only CNI Event so far.
    expect(cniEvents()).toEqual(['InterlockCniConfigBroken']);
  });

  it('2b. the taint stays while the audit fails, however long: a breaker window passing closes nothing', async () => {
    // Two windows and more ticks of the breaker (every 750 ms) than it needs to close on a clean audit.
    await new Promise((resolve) => setTimeout(resolve, 2 * WINDOW_MS));
    expect(tainted()).toBe(true);
    expect(eventsOf('InterlockBreakerClosed')).toEqual([]);
    expect(await breakerGauge()).toBe(1);
    expect(await auditGauge()).toBe(0);
  });

  it('2c. kubectl describe node shows the taint while the audit fails', async () => {
    const out = await kubectl('describe', 'node', 'node-a');
    expect(out).toMatch(/Taints:\s+interlock\.dev\/cni-not-ready:NoSchedule/);
  });

  it('3. the mesh entry is restored: a Healthy Event, and only after the breaker window the taint comes off; the gauge is 1', async () => {
    const restoredAt = await rewritePrimary(true);
    const [healthy] = await waitFor(
      'the InterlockCniConfigHealthy Event',
      () => {
        const found = eventsOf('InterlockCniConfigHealthy');
        return found.length > 0 && found;
      },
      WAIT_MS,
    );
    expect(healthy).toMatchObject({
      type: 'Normal',
      message: 'The CNI configuration audit of node node-a is healthy again.',
    });
    expect(await auditGauge()).toBe(1);
    await waitFor('the InterlockBreakerClosed Event', () => eventsOf('InterlockBreakerClosed').length > 0, WAIT_MS);
    await waitFor('the taint to come off', () => !tainted(), WAIT_MS);
    // The untaint is the breaker closing: never before the node stayed healthy for a whole window.
    const untaint = nodePatches().filter((patch) => patch.at >= restoredAt);
    expect(untaint).toHaveLength(1);
    expect(untaint[0]!.at - restoredAt).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(taints()).toEqual([]);
    expect(await auditGauge()).toBe(1);
    expect(await breakerGauge()).toBe(0);
    expect(cniEvents()).toEqual(['InterlockCniConfigBroken', 'InterlockCniConfigHealthy']);
  });

  it('4. kubectl describe node shows the Events the audit posted, and no taint', async () => {
    const out = await kubectl('describe', 'node', 'node-a');
    expect(out).toMatch(/Taints:\s+<none>/);
    expect(out).toMatch(
      /Warning\s+InterlockCniConfigBroken\s+\S+\s+interlock-node\s+CNI configuration audit failed: containerd loads 10-bridge\.conflist/,
    );
    expect(out).toMatch(
      /Warning\s+InterlockBreakerOpen\s+\S+\s+interlock-node\s+Stopped recreating pods on node node-a: CNI audit/,
    );
    expect(out).toMatch(
      /Normal\s+InterlockCniConfigHealthy\s+\S+\s+interlock-node\s+The CNI configuration audit of node node-a is healthy again\./,
    );
    expect(out).toMatch(/Normal\s+InterlockBreakerClosed\s+\S+\s+interlock-node\s+Node node-a stayed healthy for 3 s/);
  });
});
