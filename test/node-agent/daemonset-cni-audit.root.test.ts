import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import type { Http2Server } from 'node:http2';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import { nodeObject } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import { fakeCriStatus } from '../harness/fake-cri-status.js';
import { launchArgs } from '../harness/pod-namespace.js';
import { waitFor } from './agent-process.js';
import {
  daemonSetContainer,
  launch,
  launchedPod,
  launchScript,
  writeImageBin,
  type LaunchedAgent,
} from './printed-container.js';

/**
 * The node agent as `interlock manifest --node-agent --cni-audit` prints it, run as printed: its
 * command, args, env (downward API), uid/gid without capabilities, and its hostPath volumes bound
 * read-only at their mountPaths in a private mount namespace where the node's directories are
 * otherwise hidden. The CNI directories are the node's (Debian's real plugins and the mesh plugin
 * stand-in); the audit must see them through the printed volumes, and say when they break.
 */
const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const STANDIN = fileURLToPath(new URL('../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const PLUGINS = '/usr/lib/cni';
const PRIMARY = '10-bridge.conflist';
const WAIT_MS = 20_000;

let api: KubeApi;
let root: string;
let nodeDir: string;
let agent: LaunchedAgent | undefined;
let port: number;

function conflist(withMesh: boolean): string {
  const bridge = {
    type: 'bridge',
    bridge: 'cni0',
    ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.0.0/16' }]] },
  };
  const mesh = {
    name: 'linkerd-cni',
    type: 'linkerd-cni',
    linkerd: { 'incoming-proxy-port': 4143, 'outgoing-proxy-port': 4140 },
  };
  return `${JSON.stringify({ cniVersion: '1.0.0', name: 'bridge-net', plugins: withMesh ? [bridge, mesh] : [bridge] }, null, 2)}\n`;
}

/** The primary rewrites its file on the node, atomically, as CNI installers do. */
function rewritePrimary(withMesh: boolean): void {
  const staged = join(root, `staged-${PRIMARY}`);
  writeFileSync(staged, conflist(withMesh), { mode: 0o644 });
  renameSync(staged, join(nodeDir, 'net.d', PRIMARY));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return free;
}

type NodeEvent = { reason: string; message: string; involvedObject: { kind: string; name: string } };
const cniEvents = (node = 'node-a'): NodeEvent[] =>
  (api.store.list('events') as unknown as NodeEvent[]).filter(
    (event) =>
      event.involvedObject.kind === 'Node' &&
      event.involvedObject.name === node &&
      event.reason.startsWith('InterlockCniConfig'),
  );

async function auditGauge(at = port): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${at}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith('interlock_node_cni_audit_healthy '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

/** What the operator runs, with the node's CNI directories and a metrics port of their choosing. */
function printManifest(listenPort: number): string {
  return execFileSync(
    process.execPath,
    [
      MAIN,
      'manifest',
      '--node-agent',
      '--mesh',
      'linkerd',
      '--cni-audit',
      '--cni-conf-dir',
      join(nodeDir, 'net.d'),
      '--cni-bin-dir',
      join(nodeDir, 'bin'),
      '--listen',
      `127.0.0.1:${listenPort}`,
    ],
    { encoding: 'utf8' },
  );
}

beforeAll(async () => {
  execFileSync('bash', [join(SCRIPTS, 'ensure-containerd.sh')], { stdio: 'ignore' });
  root = mkdtempSync(join('/tmp', `interlock-ds-audit-${process.pid}-`));
  chmodSync(root, 0o755);
  nodeDir = join(root, 'node');
  for (const dir of [
    nodeDir,
    join(nodeDir, 'net.d'),
    join(nodeDir, 'bin'),
    join(root, 'stage'),
    join(root, 'image-bin'),
  ])
    mkdirSync(dir, { mode: 0o755 });
  for (const plugin of ['bridge', 'host-local', 'loopback'])
    copyFileSync(join(PLUGINS, plugin), join(nodeDir, 'bin', plugin));
  copyFileSync(STANDIN, join(nodeDir, 'bin', 'linkerd-cni'));
  chmodSync(join(nodeDir, 'bin', 'linkerd-cni'), 0o755);
  rewritePrimary(true);
  api = await startKubeApi({ bookmarkMs: 200 });
  api.store.put('nodes', nodeObject('node-a'));
  const kubeconfig = writeKubeconfig(join(root, 'kubeconfig'), api.url);
  // The stand-in's token is a placeholder; the printed uid must read the file.
  chmodSync(kubeconfig, 0o644);
  kubeconfigPath = kubeconfig;
  // The node's containerd, as the printed DaemonSet mounts it, answers no CRI (its CRI plugin
  // off, as Docker's): the audit's question goes unanswered, a warning, and the audit stands.
  runtime = await fakeCriStatus(join(root, 'containerd.sock'), undefined);
  port = await freePort();
  const { container, volumes } = daemonSetContainer(printManifest(port));
  api.store.put('pods', launchedPod(container, launchOptions('node-a')));
  agent = await launch(launchScript(container, volumes, launchOptions('node-a')));
});

let kubeconfigPath: string;
let runtime: Http2Server | undefined;
const launchOptions = (nodeName: string) => ({
  nodeName,
  pod: { name: `interlock-node-linkerd-${nodeName}`, namespace: 'interlock-system' },
  imageBin: writeImageBin(join(root, 'image-bin'), launchArgs('modules')),
  stage: join(root, 'stage'),
  hide: nodeDir,
  clusterEnv: { KUBECONFIG: kubeconfigPath },
  socketSources: { '/run/containerd/containerd.sock': join(root, 'containerd.sock') },
});

afterAll(async () => {
  await agent?.stop();
  runtime?.close();
  await api?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the node agent started from the printed DaemonSet audits the mounted CNI directory', () => {
  it('runs as the printed uid with the CNI directories and the runtime socket read-only, nothing else of the node', () => {
    const pid = agent!.child.pid!;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    // uid 0, the runtime socket's owner, with no capability at all.
    expect(status).toMatch(/^Uid:\s+0\s+0\s+0\s+0$/m);
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    const mounts = readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n');
    for (const path of [join(nodeDir, 'net.d'), join(nodeDir, 'bin'), '/run/containerd/containerd.sock']) {
      const mount = mounts.find((line) => line.split(' ')[4] === path);
      expect(mount, path).toBeDefined();
      expect(mount!.split(' ')[5]!.split(',')).toContain('ro');
    }
    // The node directory itself is the container's empty tmpfs: only the volumes show through.
    expect(mounts.some((line) => line.split(' ')[4] === nodeDir && line.includes(' - tmpfs '))).toBe(true);
  });

  it('healthy chain: ready on the printed probe, the audit gauge 1, no CNI Event', async () => {
    await waitFor(
      'the printed readinessProbe',
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
      WAIT_MS,
    );
    await waitFor('a healthy verdict', async () => (await auditGauge()) === 1, WAIT_MS);
    expect(cniEvents()).toEqual([]);
  });

  it('the mesh plugin dropped from the chain: a Broken Event naming the file, the gauge 0', async () => {
    rewritePrimary(false);
    const [broken] = await waitFor(
      'the InterlockCniConfigBroken Event',
      () => {
        const found = cniEvents().filter((event) => event.reason === 'InterlockCniConfigBroken');
        return found.length > 0 && found;
      },
      WAIT_MS,
    );
    expect(broken!.message).toMatch(/containerd loads 10-bridge\.conflist, whose chain \[bridge\] has no linkerd-cni/);
    await waitFor('the gauge to fall to 0', async () => (await auditGauge()) === 0, WAIT_MS);
  });

  it('the chain restored: a Healthy Event, the gauge 1', async () => {
    rewritePrimary(true);
    await waitFor(
      'the InterlockCniConfigHealthy Event',
      () => cniEvents().some((event) => event.reason === 'InterlockCniConfigHealthy'),
      WAIT_MS,
    );
    await waitFor('the gauge back at 1', async () => (await auditGauge()) === 1, WAIT_MS);
    expect(cniEvents().map((event) => event.reason)).toEqual(['InterlockCniConfigBroken', 'InterlockCniConfigHealthy']);
  });
});

describe('the same container without its volumes (so the mounts are what the audit sees)', () => {
  it('audits the empty container directory and says so: the gauge 0 and a Broken Event, never healthy', async () => {
    api.store.put('nodes', nodeObject('node-b'));
    const otherPort = await freePort();
    const { container, volumes } = daemonSetContainer(printManifest(otherPort));
    api.store.put('pods', launchedPod(container, launchOptions('node-b')));
    const unmounted = await launch(launchScript({ ...container, volumeMounts: [] }, volumes, launchOptions('node-b')));
    try {
      await waitFor('a verdict', async () => (await auditGauge(otherPort)) !== undefined, WAIT_MS);
      expect(await auditGauge(otherPort)).toBe(0);
      const [broken] = await waitFor(
        'the Broken Event on node-b',
        () => {
          const found = cniEvents('node-b');
          return found.length > 0 && found;
        },
        WAIT_MS,
      );
      expect(broken!.reason).toBe('InterlockCniConfigBroken');
      expect(broken!.message).toContain(join(nodeDir, 'net.d'));
    } finally {
      await unmounted.stop();
    }
  });
});
