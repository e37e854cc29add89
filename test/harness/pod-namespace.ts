import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
const CORPUS = resolve(REPO_ROOT, 'test/fixtures/corpus');

/**
 * Where the validator's files are read from. It runs as another uid (65534, 1337), which cannot
 * read a checkout in a 0700 directory, so test/harness/stage-global-setup.ts copies the built
 * dist/ and the production node_modules into a world-readable temporary directory for the run.
 */
function stagedRuntime(): string {
  const stage = inject('interlockStage');
  if (!stage)
    throw new Error(
      'no staged runtime: run `npm run build` before the namespace tests (vitest.config.ts stages dist/ when it exists)',
    );
  return stage;
}

/**
 * How the validator is started: `snapshot` is what the image runs (the start-up snapshot);
 * `modules` is the npm package's bin (dist/bin: the CLI bundled, with its code cache). Namespace
 * tests default to what ships in pods.
 */
export type Launcher = 'snapshot' | 'modules';

/** The V8 flags the blob was built with (scripts/node-runtime-flags.json, written beside the blob). */
function snapshotNodeFlags(stage: string): string[] {
  return readFileSync(join(stage, 'dist/snapshot/node-flags'), 'utf8').trim().split(/\s+/).filter(Boolean);
}

export function launchArgs(launcher: Launcher): string[] {
  const stage = stagedRuntime();
  return launcher === 'snapshot'
    ? [process.execPath, ...snapshotNodeFlags(stage), '--snapshot-blob', join(stage, 'dist/snapshot/interlock.blob')]
    : [process.execPath, ...binShebangFlags(stage), join(stage, 'dist/bin/interlock.cjs')];
}

/** The node flags of the npm bin's shebang (the heap cap its code cache was made under), as npm runs it. */
function binShebangFlags(stage: string): string[] {
  const shebang = readFileSync(join(stage, 'dist/bin/interlock.cjs'), 'utf8').split('\n')[0] ?? '';
  return shebang
    .replace(/^#!.*\bnode\b/, '')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
}

/**
 * A pod network namespace wired by a veth pair into a sink namespace that has no route anywhere:
 * whatever the mesh fails to capture dies in the sink, so no test packet leaves the machine.
 * `drop` discards silently (a probe waits); `reject` answers ICMP unreachable (a probe fails fast).
 */
export interface PodOptions {
  readonly ipv4?: boolean;
  readonly ipv6?: boolean;
  readonly sink?: 'drop' | 'reject';
  /** false: the primary CNI never ran (no addresses, no routes; only the veth exists). */
  readonly addresses?: boolean;
  /** false: addresses but no routes. */
  readonly routes?: boolean;
}

let counter = 0;

/** @public the type of what usePods() returns, for tests that pass a pod around. */
export class PodNamespace {
  readonly pod: string;
  readonly sink: string;
  readonly tmp: string;
  readonly terminationLog: string;
  readonly ipv4Address: string;
  readonly ipv6Address: string;

  private constructor(readonly id: number) {
    this.pod = `il${process.pid}p${id}`;
    this.sink = `il${process.pid}s${id}`;
    this.tmp = mkdtempSync(join(tmpdir(), 'interlock-'));
    chmodSync(this.tmp, 0o777);
    this.terminationLog = join(this.tmp, 'termination-log');
    const octet = (process.pid * 7 + id) % 250;
    const octet2 = id % 250;
    this.ipv4Address = `10.${200 + (octet % 50)}.${octet2}.2`;
    this.ipv6Address = `fd00:${(process.pid % 60000).toString(16)}:${id.toString(16)}::2`;
  }

  static create(options: PodOptions = {}): PodNamespace {
    const ns = new PodNamespace(++counter);
    ns.setUp({ ipv4: true, ipv6: false, sink: 'reject', addresses: true, routes: true, ...options });
    return ns;
  }

  private setUp(options: Required<PodOptions>): void {
    const { pod, sink } = this;
    const podIf = `${pod}a`.slice(-15);
    const sinkIf = `${pod}b`.slice(-15);
    sh('ip', 'netns', 'add', pod);
    sh('ip', 'netns', 'add', sink);
    sh('ip', 'link', 'add', podIf, 'type', 'veth', 'peer', 'name', sinkIf);
    sh('ip', 'link', 'set', podIf, 'netns', pod);
    sh('ip', 'link', 'set', sinkIf, 'netns', sink);
    inNs(pod, 'ip', 'link', 'set', podIf, 'name', 'eth0');
    inNs(pod, 'ip', 'link', 'set', 'lo', 'up');
    inNs(pod, 'ip', 'link', 'set', 'eth0', 'up');
    inNs(sink, 'ip', 'link', 'set', 'lo', 'up');
    inNs(sink, 'ip', 'link', 'set', sinkIf, 'up');
    const [a, b, c] = this.ipv4Address.split('.');
    const gw4 = `${a}.${b}.${c}.1`;
    const gw6 = this.ipv6Address.replace(/::2$/, '::1');
    if (options.ipv4) {
      inNs(sink, 'ip', 'addr', 'add', `${gw4}/24`, 'dev', sinkIf);
      if (options.addresses) inNs(pod, 'ip', 'addr', 'add', `${this.ipv4Address}/24`, 'dev', 'eth0');
      if (options.addresses && options.routes) inNs(pod, 'ip', 'route', 'add', 'default', 'via', gw4);
      else if (options.addresses) inNs(pod, 'ip', 'route', 'flush', 'dev', 'eth0');
    }
    if (options.ipv6) {
      inNs(sink, 'ip', 'addr', 'add', `${gw6}/64`, 'dev', sinkIf, 'nodad');
      if (options.addresses) inNs(pod, 'ip', 'addr', 'add', `${this.ipv6Address}/64`, 'dev', 'eth0', 'nodad');
      if (options.addresses && options.routes) inNs(pod, 'ip', '-6', 'route', 'add', 'default', 'via', gw6);
      else if (options.addresses) inNs(pod, 'ip', '-6', 'route', 'flush', 'dev', 'eth0');
    }
    if (options.sink === 'reject') {
      // Forwarding on but the only route beyond is `unreachable`: the sink answers ICMP errors.
      inNs(sink, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
      inNs(sink, 'sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1');
      inNs(sink, 'ip', 'route', 'add', 'unreachable', 'default');
      inNs(sink, 'ip', '-6', 'route', 'add', 'unreachable', 'default');
    }
  }

  /** Applies an iptables-save/restore file with the given backend and family. */
  applyRules(file: string, backend: 'nft' | 'legacy', family: 'ipv4' | 'ipv6' = 'ipv4'): void {
    const tool = `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-${backend}-restore`;
    execFileSync('ip', ['netns', 'exec', this.pod, tool], { input: readFileSync(file) });
  }

  applyRulesText(text: string, backend: 'nft' | 'legacy', family: 'ipv4' | 'ipv6' = 'ipv4'): void {
    const tool = `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-${backend}-restore`;
    execFileSync('ip', ['netns', 'exec', this.pod, tool], { input: text });
  }

  exec(...args: string[]): string {
    return inNs(this.pod, ...args);
  }

  execSink(...args: string[]): string {
    return inNs(this.sink, ...args);
  }

  /** A helper process (a squatter, a stranger) in the pod or sink namespace, as root. */
  spawnInPod(args: readonly string[]): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.pod, ...args], { stdio: 'ignore' });
  }

  spawnInSink(args: readonly string[]): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.sink, ...args], { stdio: 'ignore' });
  }

  /**
   * Waits until a helper listens on `port` in the pod or sink namespace: a helper that is still
   * starting on a loaded machine would turn the scenario under test into another one.
   */
  async untilListening(where: 'pod' | 'sink', port: number): Promise<void> {
    const netns = where === 'pod' ? this.pod : this.sink;
    for (let tries = 0; tries < 600; tries++) {
      if (inNs(netns, 'ss', '-Hltn', `sport = :${port}`).trim() !== '') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`nothing listens on port ${port} in the ${where} namespace ${netns} after 600 polls`);
  }

  /**
   * Runs `interlock` in the pod namespace as an unprivileged uid. `caps` keeps NET_ADMIN and
   * NET_RAW as ambient capabilities (what a validator granted them would have).
   */
  spawnInterlock(
    args: readonly string[],
    options: {
      uid?: number;
      gid?: number;
      caps?: boolean;
      /** Other capabilities kept as ambient ones (`setuid`, `setgid`), with or without `caps`. */
      extraCaps?: readonly string[];
      env?: Record<string, string>;
      launcher?: Launcher;
      /** A descriptor for the validator's stdout instead of a pipe the test reads (a stalled log pipe). */
      stdout?: number;
      /** Extra node flags before the launcher's (`--expose-gc`). */
      nodeFlags?: readonly string[];
      /** Run before node, after the uid change (`env LD_PRELOAD=...`: only node gets it, not ip or setpriv). */
      prefix?: readonly string[];
      /** A memory cgroup the run and every child it starts are charged to, as a container's are. */
      cgroup?: { readonly enter: string };
    } = {},
  ): ChildProcess {
    const uid = options.uid ?? 65534;
    const gid = options.gid ?? uid;
    const kept = [...(options.caps ? ['net_admin', 'net_raw'] : []), ...(options.extraCaps ?? [])];
    const plus = kept.map((cap) => `+${cap}`).join(',');
    const capArgs =
      kept.length > 0
        ? [`--inh-caps=${plus}`, `--ambient-caps=${plus}`, `--bounding-set=-all,${plus}`]
        : ['--inh-caps=-all', '--bounding-set=-all'];
    const inCgroup = options.cgroup ? ['-c', `${options.cgroup.enter} && exec "$@"`, 'sh', 'ip'] : [];
    return spawn(
      options.cgroup ? '/bin/sh' : 'ip',
      [
        ...inCgroup,
        'netns',
        'exec',
        this.pod,
        'setpriv',
        `--reuid=${uid}`,
        `--regid=${gid}`,
        '--clear-groups',
        ...capArgs,
        '--no-new-privs',
        ...(options.prefix ?? []),
        ...withNodeFlags(launchArgs(options.launcher ?? 'snapshot'), options.nodeFlags ?? []),
        ...args,
      ],
      {
        // The working directory too must be readable by that uid (the checkout may not be): a
        // child it spawns (iptables-save) fails to start in a directory it cannot enter.
        cwd: stagedRuntime(),
        env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ...interlockEnv(), ...options.env },
        stdio: ['ignore', options.stdout ?? 'pipe', 'pipe'],
      },
    );
  }

  async runInterlock(
    args: readonly string[],
    options: Parameters<PodNamespace['spawnInterlock']>[1] = {},
  ): Promise<InterlockRun> {
    return collect(
      this.spawnInterlock(['validate', '--termination-log', this.terminationLog, ...args], options),
      this.terminationLog,
    );
  }

  destroy(): void {
    for (const name of [this.pod, this.sink]) {
      try {
        sh('ip', 'netns', 'del', name);
      } catch {
        /* already gone */
      }
    }
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

export interface InterlockRun {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly terminationMessage: string;
  readonly logs: readonly Record<string, unknown>[];
  readonly summary: Record<string, unknown> | undefined;
}

export function collect(child: ChildProcess, terminationLog: string): Promise<InterlockRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolvePromise) => {
    child.on('close', (exitCode, signal) => {
      let terminationMessage = '';
      try {
        terminationMessage = readFileSync(terminationLog, 'utf8');
      } catch {
        /* not written */
      }
      const logs = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const summary = logs.findLast((line) => 'verdict' in line);
      resolvePromise({ exitCode, signal, stdout, stderr, terminationMessage, logs, summary });
    });
  });
}

function withNodeFlags(launch: readonly string[], flags: readonly string[]): string[] {
  const [node = process.execPath, ...rest] = launch;
  return [node, ...flags, ...rest];
}

/** INTERLOCK_* from the test runner's environment reach the validator, as a pod's env would. */
function interlockEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith('INTERLOCK_') && entry[1] !== undefined,
    ),
  );
}

function sh(command: string, ...args: string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function inNs(ns: string, ...args: string[]): string {
  return sh('ip', 'netns', 'exec', ns, ...args);
}

export function corpusFile(caseDir: string, file: string): string {
  return join(CORPUS, caseDir, file);
}

/**
 * The verdict as one line, `<Reason>: <sentence>`: the reason is the first word of the termination
 * message's first line (its headline says what to do), the sentence naming the address, port, rule
 * or file is the second line.
 */
export function verdictLine(text: string): string {
  const [head = '', sentence = ''] = text.split('\n');
  const reason = /^[A-Za-z][A-Za-z0-9]*/.exec(head)?.[0] ?? '';
  return reason === '' ? '' : `${reason}: ${sentence}`;
}

/** A factory for pod namespaces that are all destroyed after each test of the calling file. */
export function usePods(afterEach: (fn: () => void) => void): (options?: PodOptions) => PodNamespace {
  const pods: PodNamespace[] = [];
  afterEach(() => {
    while (pods.length) pods.pop()?.destroy();
  });
  return (options = {}) => {
    const created = PodNamespace.create(options);
    pods.push(created);
    return created;
  };
}
