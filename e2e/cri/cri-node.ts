import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, readlink, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { run } from '../cni/containerd-node.js';
import { CriClient } from './cri-client.js';
import { criName, importImage, INTERLOCK_IMAGE, PAUSE_IMAGE } from './images.js';

export interface CriNodeHandle {
  readonly name: string;
  readonly root: string;
  readonly socket: string;
}

export interface CniState {
  readonly config: string;
  readonly networkReady: boolean;
  readonly message: string;
}

/** Every directory of a CRI node is made under this prefix; the sweep finds orphans by it. */
const ROOT_PREFIX = '/tmp/interlock-cri-node-';
/** Debian's containernetworking-plugins. */
const PLUGINS = '/usr/lib/cni';
const FIXTURES = fileURLToPath(new URL('../../test/fixtures/cni/', import.meta.url));
const CGROUPS = '/sys/fs/cgroup';
const GUARDIAN = fileURLToPath(new URL('./guardian.sh', import.meta.url));

/**
 * A Kubernetes node without Kubernetes: Debian's containerd 1.6 with its CRI plugin, in a "node"
 * network namespace of its own (no link outside; an unreachable default route with forwarding on,
 * so a pod's uncaptured probe gets an ICMP error and nothing leaves), in a private mount namespace
 * (containerd 1.6 puts shim sockets under /run/containerd whatever its state directory is), with
 * its own root, state, socket, runc root, CNI conf and bin dirs and pod cgroup parent. The CNI
 * plugins are the real `bridge`, `host-local`, `loopback` and `portmap`, with the mesh stand-ins.
 */
export class CriNode {
  private constructor(
    readonly name: string,
    readonly root: string,
    readonly socket: string,
    readonly cri: CriClient,
    /** The daemon, in the process that started it; absent where a test file attached to it. */
    private readonly daemon: ChildProcess | undefined,
  ) {}

  /** What a test file needs to use a node another process started (vitest's global setup). */
  get handle(): CriNodeHandle {
    return { name: this.name, root: this.root, socket: this.socket };
  }

  /** The node another process started: pods and CNI configuration through it; stopping stays with its owner. */
  static attach(handle: CriNodeHandle): CriNode {
    return new CriNode(handle.name, handle.root, handle.socket, CriClient.connect(handle.socket), undefined);
  }

  get confDir(): string {
    return join(this.root, 'net.d');
  }
  get binDir(): string {
    return join(this.root, 'cni-bin');
  }
  /** The cgroup parent of every pod on this node (the kubelet's kubepods, per node). */
  get cgroupParent(): string {
    return `/${this.name}`;
  }
  get sandboxImage(): string {
    return criName(PAUSE_IMAGE);
  }
  get interlockImage(): string {
    return criName(INTERLOCK_IMAGE);
  }

  static async start(): Promise<CriNode> {
    await sweepOrphans();
    const name = `ilk-cri-${process.pid}`;
    const root = await mkdtemp(ROOT_PREFIX);
    await writeFile(join(root, 'owner'), String(process.pid));
    await writeFile(join(root, 'name'), name);
    for (const dir of ['net.d', 'cni-bin', 'cni-data', 'logs', 'run']) await mkdir(join(root, dir));
    const socket = join(root, 'containerd.sock');
    await writeFile(join(root, 'containerd.toml'), containerdConfig(root, socket, name));
    await installPlugins(join(root, 'cni-bin'));
    await netns(name);
    const setup = [
      'set -e',
      // Shim sockets and the CRI's netns mounts stay in this mount namespace and die with it.
      'mount -t tmpfs interlock-cri-run /run/containerd 2>/dev/null || { mkdir -p /run/containerd && mount -t tmpfs interlock-cri-run /run/containerd; }',
      `exec nsenter --net=/run/netns/${name} containerd --config ${root}/containerd.toml`,
    ].join('\n');
    // Its own session: a Ctrl-C to the test must not kill it before the pods are removed through it.
    const log = openSync(join(root, 'containerd.log'), 'a');
    const daemon = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', setup], {
      stdio: ['ignore', 'ignore', log],
      detached: true,
    });
    closeSync(log);
    const node = new CriNode(name, root, socket, CriClient.connect(socket), daemon);
    // Cleans up if this process dies without stopping the node (vitest exits at once on Ctrl-C).
    spawn('sh', [GUARDIAN, String(process.pid), root, name], { detached: true, stdio: 'ignore' }).unref();
    try {
      await node.waitReady();
      await writeFile(join(root, 'mntns'), await readlink(`/proc/${daemon.pid}/ns/mnt`));
      await Promise.all([PAUSE_IMAGE, INTERLOCK_IMAGE].map((image) => importImage(socket, image)));
      return node;
    } catch (error) {
      await node.stop();
      throw error;
    }
  }

  private async waitReady(): Promise<void> {
    for (let i = 0; i < 600; i++) {
      if (this.daemon && this.daemon.exitCode !== null) break;
      if (existsSync(this.socket)) {
        const version = await this.cri.call('Version', {}, 2_000).catch(() => undefined);
        if (version) return;
      }
      await sleep(100);
    }
    throw new Error(`containerd's CRI did not start:\n${this.log().slice(-4000)}`);
  }

  /** The tail of the daemon's log (containerd and the CRI plugin write to stderr). */
  private log(): string {
    try {
      return readFileSync(join(this.root, 'containerd.log'), 'utf8').slice(-100_000);
    } catch {
      return '';
    }
  }

  /** A command in the node's network namespace (its bridges and the pods' veths live there). */
  inNode(command: string, args: readonly string[]) {
    return run('nsenter', [`--net=/run/netns/${this.name}`, command, ...args]);
  }

  /**
   * Writes a configuration file in place. containerd 1.6's conf syncer reloads on write, rename
   * and remove events but ignores create: a file renamed into the directory (an atomic install)
   * is not seen until the next write there, so this writes as the meshes' installers do.
   */
  async writeConfig(name: string, text: string): Promise<void> {
    await writeFile(join(this.confDir, name), text);
  }

  async clearConfigs(): Promise<void> {
    for (const entry of await readdir(this.confDir)) await rm(join(this.confDir, entry), { recursive: true });
  }

  /** What the CRI plugin's CNI syncer holds now: the loaded networks and the NetworkReady condition. */
  async cniState(): Promise<CniState> {
    const status = await this.cri.call('Status', { verbose: true });
    const conditions = ((status['status'] as Record<string, unknown> | undefined)?.['conditions'] ?? []) as Array<{
      type: string;
      status: boolean;
      message: string;
    }>;
    const network = conditions.find((condition) => condition.type === 'NetworkReady');
    return {
      config: String((status['info'] as Record<string, string> | undefined)?.['cniconfig'] ?? ''),
      networkReady: network?.status === true,
      message: network?.message ?? '',
    };
  }

  /** Waits until the syncer (it reloads the conf dir on file events) holds what `expect` wants. */
  async waitCni(expect: (state: CniState) => boolean): Promise<CniState> {
    let state = await this.cniState();
    for (let i = 0; i < 300 && !expect(state); i++) {
      await sleep(100);
      state = await this.cniState();
    }
    if (expect(state)) return state;
    const cniLog = this.log()
      .split('\n')
      .filter((line) => /cni/i.test(line))
      .slice(-10)
      .join('\n');
    throw new Error(
      `the CRI plugin's CNI state did not become as expected: ${JSON.stringify(state).slice(0, 2000)}\n${cniLog}`,
    );
  }

  /** Waits until the syncer has loaded a configuration whose JSON includes `text` (or matches it). */
  waitCniLoaded(text: string | RegExp): Promise<CniState> {
    return this.waitCni((state) => (typeof text === 'string' ? state.config.includes(text) : text.test(state.config)));
  }

  async stop(): Promise<void> {
    await this.removeAllPods();
    this.cri.close();
    if (!this.daemon) return;
    await stopProcessTree(this.daemon, this.root);
    await run('ip', ['netns', 'del', this.name]);
    await removeCgroups(this.name);
    await rm(this.root, { recursive: true, force: true });
  }

  /** What the kubelet does at the end of a pod, for every pod left: stop and remove its sandbox. */
  async removeAllPods(): Promise<void> {
    if (this.daemon && this.daemon.exitCode !== null) return;
    const listed = await this.cri.call('ListPodSandbox', {}, 10_000).catch(() => ({ items: [] }));
    const sandboxes = (listed['items'] as Array<{ id: string }> | undefined) ?? [];
    await Promise.all(
      sandboxes.map(async (sandbox) => {
        await this.cri.call('StopPodSandbox', { pod_sandbox_id: sandbox.id }).catch(() => undefined);
        await this.cri.call('RemovePodSandbox', { pod_sandbox_id: sandbox.id }).catch(() => undefined);
      }),
    );
  }
}

async function installPlugins(binDir: string): Promise<void> {
  for (const plugin of ['bridge', 'host-local', 'loopback', 'portmap'])
    await copyFile(join(PLUGINS, plugin), join(binDir, plugin));
  await copyFile(join(FIXTURES, 'mesh-cni-standin.mjs'), join(binDir, 'linkerd-cni'));
  await copyFile(join(FIXTURES, 'mesh-cni-standin.mjs'), join(binDir, 'istio-cni'));
  await copyFile(join(FIXTURES, 'mesh-cni-standin.mjs'), join(binDir, 'kuma-cni'));
  await copyFile(join(FIXTURES, 'old-cni-standin.mjs'), join(binDir, 'old-mesh'));
  for (const plugin of ['linkerd-cni', 'istio-cni', 'kuma-cni', 'old-mesh']) await chmod(join(binDir, plugin), 0o755);
}

async function netns(name: string): Promise<void> {
  const steps: string[][] = [
    ['ip', 'netns', 'add', name],
    ['ip', '-n', name, 'link', 'set', 'lo', 'up'],
    ['nsenter', `--net=/run/netns/${name}`, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1'],
    ['ip', '-n', name, 'route', 'add', 'unreachable', 'default'],
    ['ip', '-n', name, '-6', 'route', 'add', 'unreachable', 'default'],
  ];
  for (const [command, ...args] of steps) {
    const result = await run(command as string, args);
    if (result.exitCode !== 0) throw new Error(`${[command, ...args].join(' ')}: ${result.stderr}`);
  }
}

/**
 * Ends containerd and every process left in its mount namespace (shims, pods of an interrupted
 * run): by namespace identity, never by name, so nothing of anyone else is touched.
 */
async function stopProcessTree(daemon: ChildProcess | undefined, root: string): Promise<void> {
  const mntns = await readFile(join(root, 'mntns'), 'utf8').catch(() => '');
  if (daemon && daemon.exitCode === null) {
    daemon.kill('SIGTERM');
    for (let i = 0; i < 50 && daemon.exitCode === null; i++) await sleep(100);
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
  }
  await killCgroupProcesses(await readFile(join(root, 'name'), 'utf8').catch(() => ''));
  if (mntns === '') return;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const ns = await readlink(`/proc/${pid}/ns/mnt`).catch(() => '');
    if (ns !== mntns) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** Pods left running (their processes are in the node's cgroups, not its mount namespace). */
async function killCgroupProcesses(name: string): Promise<void> {
  if (name === '') return;
  const hierarchies = (await readdir(CGROUPS).catch(() => [] as string[])).map((h) => join(CGROUPS, h, name));
  for (const dir of [join(CGROUPS, name), ...hierarchies]) await killTree(dir);
}

async function killTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return;
  for (const entry of entries) if (entry.isDirectory()) await killTree(join(dir, entry.name));
  const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  for (const pid of procs.split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** The pods' cgroups under this node's parent, in every v1 hierarchy (or the v2 tree), deepest first. */
async function removeCgroups(name: string): Promise<void> {
  const hierarchies = (await readdir(CGROUPS).catch(() => [] as string[])).map((h) => join(CGROUPS, h));
  for (const base of [CGROUPS, ...hierarchies]) await removeTree(join(base, name));
}

async function removeTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return;
  for (const entry of entries) if (entry.isDirectory()) await removeTree(join(dir, entry.name));
  await rmdir(dir).catch(() => undefined);
}

/** Nodes whose test process died without stopping them (an interrupted run): cleaned at the next start. */
async function sweepOrphans(): Promise<void> {
  for (const entry of await readdir('/tmp')) {
    const root = join('/tmp', entry);
    if (!root.startsWith(ROOT_PREFIX)) continue;
    const owner = Number(await readFile(join(root, 'owner'), 'utf8').catch(() => '0'));
    if (owner > 0 && existsSync(`/proc/${owner}`)) continue;
    await stopProcessTree(undefined, root);
    await run('ip', ['netns', 'del', `ilk-cri-${owner}`]);
    await removeCgroups(`ilk-cri-${owner}`);
    await rm(root, { recursive: true, force: true });
  }
}

/** Where the CRI plugin looks for CNI: this node's own directories unless told (a GKE node's bin dir). */
export function containerdConfig(
  root: string,
  socket: string,
  name: string,
  cni: { readonly binDir: string; readonly confDir: string } = { binDir: `${root}/cni-bin`, confDir: `${root}/net.d` },
): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${root}/containerd-root"
state = "${root}/containerd-state"
disabled_plugins = ["io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[${cri}]
  sandbox_image = "${criName(PAUSE_IMAGE)}"
  # The machine lacks CAP_SYS_RESOURCE: the sandbox's oom_score_adj -998 would fail the pod.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # ${name}: the node this configuration belongs to.
[${cri}.cni]
  bin_dir = "${cni.binDir}"
  conf_dir = "${cni.confDir}"
  max_conf_num = 1
[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[${cri}.containerd.runtimes.runc.options]
  Root = "${root}/runc"
  SystemdCgroup = false
`;
}
