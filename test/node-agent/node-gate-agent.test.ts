import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESH_CONDITION } from '../../src/node-agent/node-gate.js';
import { SANDBOX_FAILED_REASON } from '../../src/node-agent/sandbox-failure.js';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import { nodeObject } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi, type RequestRecord } from '../harness/kube-api/server.js';
import { metric, startAgent, waitFor, type AgentProcess } from './agent-process.js';
import { cniNodeDir, MESH_PLUGIN, type CniNodeDir } from './cni-node-dir.js';

// Issue 47 against the API stand-in: the real `interlock node` (dist/) with --report-condition and
// --startup-taint, auditing a CNI directory of Debian's real plugins and the mesh stand-in, on a node
// registered with the start-up taint (as kubelet --register-with-taints leaves it) and broken from boot.
const STARTUP = { key: 'readiness.k8s.io/mesh-not-ready', value: 'pending', effect: 'NoSchedule' };
const OTHER = { key: 'example.com/dedicated', value: 'db', effect: 'NoExecute' };
const INTERVAL_MS = 1000;
const WINDOW_MS = 3000;
const WAIT_MS = 20_000;
const ISTIO_57978 = (
  JSON.parse(readFileSync(new URL('../fixtures/kube/sandbox-events.json', import.meta.url), 'utf8')) as {
    events: { source: string; message: string }[];
  }
).events.find((event) => event.source.endsWith('/57978'))!.message;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  lastHeartbeatTime: string;
}
interface Taint {
  key: string;
  value?: string;
  effect: string;
}

let api: KubeApi;
let agent: AgentProcess | undefined;
let dir: CniNodeDir;
let started = 0;

const node = () =>
  api.store.get('nodes', undefined, 'node-a') as unknown as {
    spec: { taints?: Taint[] };
    status: { conditions: Condition[] };
  };
const condition = (): Condition | undefined => node().status.conditions.find((c) => c.type === MESH_CONDITION);
const taintKeys = (): string[] => (node().spec.taints ?? []).map((taint) => taint.key);
const nodeEvents = (reason: string) =>
  (
    api.store.list('events') as unknown as {
      reason: string;
      type: string;
      message: string;
      involvedObject: { kind: string };
    }[]
  ).filter((event) => event.involvedObject.kind === 'Node' && event.reason === reason);
const statusPatches = (): RequestRecord[] =>
  api.requests.filter((request) => request.method === 'PATCH' && request.path === '/api/v1/nodes/node-a/status');

/** A kubelet's Event about a pod whose sandbox the runtime could not set up (the kubelet's fields, pkg/kubelet/events). */
function sandboxEvent(name: string, host: string, message: string, count = 1): object {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    metadata: { name: `${name}.187a`, namespace: 'shop' },
    involvedObject: { kind: 'Pod', namespace: 'shop', name, apiVersion: 'v1', uid: `uid-${name}` },
    reason: SANDBOX_FAILED_REASON,
    message,
    type: 'Warning',
    source: { component: 'kubelet', host },
    firstTimestamp: now,
    lastTimestamp: now,
    count,
  };
}

beforeAll(async () => {
  execFileSync('bash', [new URL('../../scripts/ensure-kubectl.sh', import.meta.url).pathname], { stdio: 'ignore' });
  dir = await cniNodeDir(false);
  api = await startKubeApi({ bookmarkMs: 200 });
  const registered = nodeObject('node-a');
  registered.spec = { ...(registered.spec as object), taints: [STARTUP, OTHER] };
  api.store.put('nodes', registered);
  started = Date.now();
  agent = await startAgent(
    api,
    [
      ...dir.auditArgs,
      '--report-condition',
      '--startup-taint',
      STARTUP.key,
      '--condition-interval',
      `${INTERVAL_MS / 1000}s`,
      '--breaker-window',
      `${WINDOW_MS / 1000}s`,
    ],
    {},
    [],
    'istio',
  );
});

afterAll(async () => {
  if (agent) {
    await Promise.race([agent.terminate(), new Promise((resolve) => setTimeout(resolve, 6000))]);
    agent.kill();
  }
  await api?.close();
  await dir?.remove();
});

describe('interlock node --report-condition --startup-taint: a node broken from boot, then fixed, then a plugin failing at ADD', () => {
  it('1. broken from boot: the condition is False naming the CNI configuration, and the start-up taint is held', async () => {
    const broken = await waitFor('the condition', () => condition()?.status === 'False' && condition(), WAIT_MS);
    expect(broken.reason).toBe('CNIConfigBroken');
    expect(broken.message).toContain(MESH_PLUGIN);
    // Several intervals later: still held, and nothing else about the taints changed.
    await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS));
    expect(taintKeys()).toEqual([STARTUP.key, OTHER.key]);
    expect(api.requests.filter((r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/node-a')).toEqual([]);
  });

  it('2. the mesh plugin is chained: the taint lifts, by a patch carrying the resourceVersion, and only it', async () => {
    await dir.writePrimary(true);
    await waitFor('the start-up taint to lift', () => !taintKeys().includes(STARTUP.key), WAIT_MS);
    expect(node().spec.taints).toEqual([OTHER]);
    const patch = api.requests.find(
      (r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/node-a' && r.status === 200,
    );
    expect((patch?.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion).toMatch(/^\d+$/);
    await waitFor('the condition True', () => condition()?.status === 'True', WAIT_MS);
    expect(condition()?.reason).toBe('MeshCNIReady');
    expect(nodeEvents('InterlockStartupTaintRemoved')).toHaveLength(1);
  });

  it('3. an Event of another node or not from a kubelet changes nothing', async () => {
    api.store.put('events', { ...sandboxEvent('other-1', 'node-b', ISTIO_57978) } as never);
    api.store.put('events', {
      ...sandboxEvent('forged-1', 'node-a', ISTIO_57978),
      source: { component: 'tenant', host: 'node-a' },
    } as never);
    await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS));
    expect(condition()?.status).toBe('True');
    expect(nodeEvents('MeshPluginFailing')).toEqual([]);
  });

  it('4. the mesh plugin fails at ADD: False naming the plugin and its cause, a Warning on the Node, the metric; the taint stays off', async () => {
    api.store.put('events', sandboxEvent('web-1', 'node-a', ISTIO_57978, 2) as never);
    const failing = await waitFor(
      'MeshPluginFailing',
      () => condition()?.reason === 'MeshPluginFailing' && condition(),
      WAIT_MS,
    );
    expect(failing.status).toBe('False');
    expect(failing.message).toContain(`${MESH_PLUGIN} failed 2 pod sandbox(es)`);
    expect(failing.message).toContain('"nft": executable file not found');
    expect(nodeEvents('MeshPluginFailing').map((event) => event.type)).toEqual(['Warning']);
    expect(metric(await agent!.metrics(), 'interlock_node_mesh_plugin_failures_total{cause="tool-missing"}')).toBe(2);
    expect(metric(await agent!.metrics(), 'interlock_node_mesh_ready')).toBe(0);
    expect(taintKeys()).toEqual([OTHER.key]);
  });

  it('5. a window without failures: True again, and the taint is never put back', async () => {
    await waitFor('the condition True again', () => condition()?.status === 'True', WAIT_MS);
    expect(nodeEvents('MeshPluginRecovered')).toHaveLength(1);
    expect(taintKeys()).toEqual([OTHER.key]);
  });

  it('6. no write storm: at most one condition PATCH per interval over the run, each a strategic merge of its own condition', () => {
    const seconds = (Date.now() - started) / 1000;
    const patches = statusPatches();
    expect(patches.length).toBeGreaterThanOrEqual(4);
    expect(patches.length).toBeLessThanOrEqual(Math.ceil(seconds / (INTERVAL_MS / 1000)) + 1);
    for (const patch of patches)
      expect((patch.body as { status: { conditions: Condition[] } }).status.conditions.map((c) => c.type)).toEqual([
        MESH_CONDITION,
      ]);
    // The kubelet's own conditions are untouched by the merge.
    expect(node().status.conditions.map((c) => c.type)).toContain('Ready');
  });

  it("7. kubectl describe node shows the condition, its reason, and the gate's Events", async () => {
    const kubeconfig = writeKubeconfig(join(dir.root, 'kubeconfig'), api.url);
    const { stdout } = await promisify(execFile)('kubectl', ['describe', 'node', 'node-a'], {
      env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: dir.root },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(stdout).toMatch(
      new RegExp(`^\\s+${MESH_CONDITION.replace('.', '\\.')}\\s+True\\s+.*MeshCNIReady\\s+CNI audit clean`, 'm'),
    );
    expect(stdout).toMatch(/Warning\s+MeshPluginFailing/);
    expect(stdout).toMatch(/Normal\s+InterlockStartupTaintRemoved/);
    expect(stdout).toMatch(/^Taints:\s+example\.com\/dedicated=db:NoExecute$/m);
  });
});
