import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Run {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end with a deadline (killed at the deadline: exit code 137). */
export function run(
  command: string,
  args: readonly string[],
  options: { input?: string | NodeJS.ReadableStream; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ exitCode: 127, stdout, stderr: `${stderr}${error.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? (signal === 'SIGKILL' ? 137 : 128), stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    if (typeof options.input === 'string') child.stdin.end(options.input);
    else if (options.input) options.input.pipe(child.stdin);
    else child.stdin.end();
  });
}

async function must(command: string, args: readonly string[]): Promise<string> {
  const result = await run(command, args);
  if (result.exitCode !== 0) throw new Error(`${command} ${args.join(' ')}: exit ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

/**
 * A node for CNI tests: a containerd 1.6 of its own in a "node" network namespace with no link
 * outside (unreachable default route, forwarding on, so a pod's uncaptured probe gets an ICMP
 * error and nothing leaves), inside a private mount namespace where temporary directories are
 * mounted over /etc/cni/net.d, /opt/cni/bin and /var/lib/cni (through overlays of /etc, /opt and
 * /var/lib, so even missing mount points are never created on the machine), with its own root,
 * state and socket. `ctr` runs in the same two namespaces, as the CNI caller (`ctr run --cni`).
 */
export class ContainerdNode {
  private constructor(
    readonly name: string,
    readonly root: string,
    readonly confDir: string,
    readonly binDir: string,
    readonly socket: string,
    private readonly daemon: ChildProcess,
  ) {}

  static async start(): Promise<ContainerdNode> {
    const name = `ilk-cni-${process.pid}`;
    const root = await mkdtemp('/tmp/interlock-cni-node-');
    const dirs = ['net.d', 'bin', 'var-lib-cni', 'containerd-root', 'containerd-state', 'overlays'];
    for (const dir of dirs) await mkdir(join(root, dir));
    const socket = join(root, 'containerd.sock');
    await writeFile(join(root, 'containerd.toml'), containerdConfig(root, socket));
    await must('ip', ['netns', 'add', name]);
    await must('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
    await must('nsenter', [`--net=/run/netns/${name}`, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    await must('ip', ['-n', name, 'route', 'add', 'unreachable', 'default']);
    await must('ip', ['-n', name, '-6', 'route', 'add', 'unreachable', 'default']);
    const setup = [
      'set -e',
      `mount -t tmpfs interlock-cni ${root}/overlays`,
      ...['etc', 'opt', 'var/lib'].map(
        (dir, index) =>
          `mkdir -p ${root}/overlays/up${index} ${root}/overlays/work${index} && mount -t overlay overlay -o lowerdir=/${dir},upperdir=${root}/overlays/up${index},workdir=${root}/overlays/work${index} /${dir}`,
      ),
      'mkdir -p /etc/cni/net.d /opt/cni/bin /var/lib/cni /run/containerd',
      `mount --bind ${root}/net.d /etc/cni/net.d`,
      `mount --bind ${root}/bin /opt/cni/bin`,
      `mount --bind ${root}/var-lib-cni /var/lib/cni`,
      // containerd 1.6 puts shim sockets under /run/containerd/s whatever its state directory is.
      'mount -t tmpfs interlock-cni-run /run/containerd',
      `exec nsenter --net=/run/netns/${name} containerd --config ${root}/containerd.toml`,
    ].join('\n');
    const daemon = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', setup], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    daemon.stderr?.on('data', (chunk: Buffer) => {
      if (log.length < 200_000) log += chunk.toString('utf8');
    });
    const node = new ContainerdNode(name, root, join(root, 'net.d'), join(root, 'bin'), socket, daemon);
    for (let i = 0; i < 100 && !(existsSync(socket) && (await node.ctr(['version'])).exitCode === 0); i++) {
      if (daemon.exitCode !== null) break;
      await sleep(100);
    }
    if ((await node.ctr(['version'])).exitCode !== 0) {
      await node.stop();
      throw new Error(`containerd did not start:\n${log.slice(-4000)}`);
    }
    return node;
  }

  /** `ctr` against this node's containerd, in its mount and network namespaces. */
  ctr(
    args: readonly string[],
    options: { input?: string | NodeJS.ReadableStream; timeoutMs?: number } = {},
  ): Promise<Run> {
    const pid = this.daemon.pid;
    return run(
      'nsenter',
      [
        `--mount=/proc/${pid}/ns/mnt`,
        `--net=/run/netns/${this.name}`,
        'ctr',
        '-a',
        this.socket,
        '-n',
        'interlock',
        ...args,
      ],
      options,
    );
  }

  /** A command in the node's network namespace (its bridges and veths live there). */
  inNode(command: string, args: readonly string[]): Promise<Run> {
    return run('nsenter', [`--net=/run/netns/${this.name}`, command, ...args]);
  }

  /** Empties the configuration directory (the runtime's view changes at once: it is a bind mount). */
  async clearConfigs(): Promise<void> {
    for (const name of await readdir(this.confDir))
      await rm(join(this.confDir, name), { recursive: true, force: true });
  }

  async writeConfig(name: string, text: string): Promise<void> {
    await writeFile(join(this.confDir, name), text);
  }

  async removeConfig(name: string): Promise<void> {
    await unlink(join(this.confDir, name)).catch(() => undefined);
  }

  async stop(): Promise<void> {
    const containers = await this.ctr(['containers', 'list', '-q']);
    for (const id of containers.stdout.split('\n').filter(Boolean)) {
      await this.ctr(['tasks', 'kill', '-s', 'SIGKILL', id]);
      await this.ctr(['tasks', 'delete', '-f', id]);
      await this.ctr(['containers', 'delete', id]);
    }
    if (this.daemon.exitCode === null) {
      this.daemon.kill('SIGTERM');
      for (let i = 0; i < 50 && this.daemon.exitCode === null; i++) await sleep(100);
      if (this.daemon.exitCode === null) this.daemon.kill('SIGKILL');
    }
    await run('ip', ['netns', 'del', this.name]);
    await rm(this.root, { recursive: true, force: true });
  }
}

function containerdConfig(root: string, socket: string): string {
  return [
    'version = 2',
    `root = "${root}/containerd-root"`,
    `state = "${root}/containerd-state"`,
    // The CRI plugin would start its own CNI syncer and stream server: ctr run --cni is the caller here.
    'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]',
    '[grpc]',
    `  address = "${socket}"`,
    '[ttrpc]',
    `  address = "${socket}.ttrpc"`,
    '[debug]',
    '  address = ""',
    '[metrics]',
    '  address = ""',
    '',
  ].join('\n');
}
