import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { StartedTestContainer } from 'testcontainers';
import {
  containerOutput,
  dockerContainer,
  INTERLOCK_IMAGE,
  NEVER_PULL,
  PodContainer,
  StartedOnly,
} from './containers.js';
import { withDeadline } from './host.js';
import type { Pod } from './pod.js';

/** The security context a mesh injects the validator with. */
export interface SecurityContext {
  /** uid:gid; undefined runs the image's own default user. */
  readonly user: string | undefined;
  /** Added after every capability is dropped. */
  readonly addCapabilities: readonly string[];
}

/** The image as it comes: its default user, no capabilities. */
export const IMAGE_DEFAULTS: SecurityContext = { user: undefined, addCapabilities: [] };
/** Linkerd's network-validator: nobody, no capabilities. */
export const LINKERD_VALIDATOR: SecurityContext = { user: '65534:65534', addCapabilities: [] };
/** Istio's istio-validation: the proxy's own uid, no capabilities. */
export const ISTIO_VALIDATION: SecurityContext = { user: '1337:1337', addCapabilities: [] };
/**
 * proxy-init's context (uid 0, NET_ADMIN and NET_RAW). Root is what makes the two capabilities
 * usable: a non-root process gets added capabilities only in its bounding set, never effective,
 * as Docker and Kubernetes set no ambient capabilities.
 */
export const WITH_NET_ADMIN: SecurityContext = { user: '0:0', addCapabilities: ['NET_ADMIN', 'NET_RAW'] };

export interface InterlockOptions {
  readonly security: SecurityContext;
  readonly args?: readonly string[];
  /** The container's `command:` in place of the image's entrypoint (a mesh's drop-in path). */
  readonly entrypoint?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** The pod's cpu.shares; Docker's default (1024) unless given. */
  readonly cpuShares?: number;
}

export type LogLine = Readonly<Record<string, unknown>>;

export interface InterlockResult {
  readonly exitCode: number;
  /** What the kubelet would show as the container's termination message. */
  readonly terminationMessage: string;
  /** `<Reason>` of the message's first line `<Reason>: <sentence>`, if it has that shape. */
  readonly reason: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout lines parsed as JSON; lines that are not JSON objects are in `unparsed`. */
  readonly logs: readonly LogLine[];
  readonly unparsed: readonly string[];
  readonly containerId: string;
}

/** An init container that has started and has not been waited for yet. */
export interface RunningInterlock {
  readonly container: StartedTestContainer;
  /** Waits (bounded) for the container to exit and collects what it left behind. */
  result(): Promise<InterlockResult>;
}

/** No run should come near this; a hang must fail the test rather than stall the suite. */
const EXIT_DEADLINE_MS = 90_000;

/**
 * Starts the Interlock image as an init container of the pod: it joins the sandbox's network
 * namespace, runs with the given uid, every capability dropped (some added back if asked), a
 * read-only root filesystem, no privilege escalation, and the termination-log file the kubelet
 * mounts, made fresh for each container as the kubelet does.
 */
export async function startInterlock(pod: Pod, options: InterlockOptions): Promise<RunningInterlock> {
  const dir = await mkdtemp(path.join(tmpdir(), 'interlock-e2e-'));
  const terminationLog = await createTerminationLog(dir, 'termination-log');

  let builder = new PodContainer(INTERLOCK_IMAGE)
    .withPullPolicy(NEVER_PULL)
    .withNetworkMode(`container:${pod.sandboxId}`)
    .withDroppedCapabilities('ALL')
    .withReadOnlyRootFilesystem()
    .withSecurityOpt('no-new-privileges')
    .withBindMounts([{ source: terminationLog, target: '/dev/termination-log', mode: 'rw' }])
    .withEnvironment({ ...options.env })
    .withCommand([...(options.args ?? [])])
    .withLabels({ 'io.mesh-interlock.e2e': 'interlock' })
    .withWaitStrategy(new StartedOnly());
  if (options.entrypoint !== undefined) builder = builder.withEntrypoint([...options.entrypoint]);
  if (options.security.user !== undefined) builder = builder.withUser(options.security.user);
  if (options.cpuShares !== undefined) builder = builder.withCpuShares(options.cpuShares);
  if (options.security.addCapabilities.length > 0)
    builder = builder.withAddedCapabilities(...options.security.addCapabilities);

  const container = await builder.start();
  pod.adopt(container);

  return {
    container,
    async result(): Promise<InterlockResult> {
      const docker = await dockerContainer(container.getId());
      const { StatusCode: exitCode } = (await withDeadline(
        docker.wait(),
        EXIT_DEADLINE_MS,
        "the interlock container's exit",
      )) as { StatusCode: number };
      const { stdout, stderr } = await containerOutput(docker);
      const terminationMessage = await readFile(terminationLog, 'utf8');
      await rm(dir, { recursive: true, force: true });
      const { logs, unparsed } = parseLogLines(stdout);
      const reason = /^([A-Z][A-Za-z]+): \S/.exec(terminationMessage)?.[1];
      return { exitCode, terminationMessage, reason, stdout, stderr, logs, unparsed, containerId: container.getId() };
    },
  };
}

/** The file the kubelet mounts at /dev/termination-log, empty, one per container. */
export async function createTerminationLog(dir: string, name: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, '');
  // World-writable like the kubelet's, since the container's uid does not own the host file.
  await chmod(file, 0o666);
  return file;
}

export async function runInterlock(pod: Pod, options: InterlockOptions): Promise<InterlockResult> {
  return (await startInterlock(pod, options)).result();
}

/** Splits stdout into JSON log records and whatever lines are not JSON objects. */
export function parseLogLines(stdout: string): { logs: LogLine[]; unparsed: string[] } {
  const logs: LogLine[] = [];
  const unparsed: string[] = [];
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const parsed = parseJsonObject(line);
    if (parsed) logs.push(parsed);
    else unparsed.push(line);
  }
  return { logs, unparsed };
}

function parseJsonObject(line: string): LogLine | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as LogLine) : undefined;
  } catch {
    return undefined;
  }
}

/** Everything about a run, for assertion messages: what an operator would look at. */
export function runReport(result: InterlockResult): string {
  return [
    `exit ${result.exitCode}`,
    `termination message:\n${result.terminationMessage}`,
    `stdout:\n${result.stdout}`,
    `stderr:\n${result.stderr}`,
  ].join('\n');
}
