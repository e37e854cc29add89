import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { captureOutput, waitFor } from './agent-process.js';

/** The fields of a printed container the launcher honours; anything else it does not know fails the test. */
export interface PrintedContainer {
  readonly name: string;
  readonly image: string;
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly env: readonly { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  readonly volumeMounts: readonly { name: string; mountPath: string; readOnly?: boolean }[];
  readonly securityContext: { runAsUser: number; runAsGroup: number; capabilities?: { drop?: string[] } };
}

export interface PrintedVolume {
  readonly name: string;
  readonly hostPath?: { path: string; type?: string };
}

/** The DaemonSet's first container and its volumes, from `interlock manifest --node-agent` output. */
export function daemonSetContainer(yamlText: string): { container: PrintedContainer; volumes: PrintedVolume[] } {
  const daemonSet = parseAllDocuments(yamlText)
    .map((doc) => doc.toJS() as { kind?: string; spec?: { template: { spec: Record<string, unknown> } } })
    .find((object) => object.kind === 'DaemonSet');
  if (!daemonSet?.spec) throw new Error('no DaemonSet in the printed manifest');
  const pod = daemonSet.spec.template.spec as { containers: PrintedContainer[]; volumes?: PrintedVolume[] };
  return { container: pod.containers[0]!, volumes: pod.volumes ?? [] };
}

export interface LaunchOptions {
  /** spec.nodeName, for the downward API. */
  readonly nodeName: string;
  /** The pod the kubelet runs the container in: metadata.name and metadata.namespace, for the downward API. */
  readonly pod: { readonly name: string; readonly namespace: string };
  /** Where the image's `interlock` is: a directory put first on PATH. */
  readonly imageBin: string;
  /** A directory the launcher may use for its staging mounts. */
  readonly stage: string;
  /** The directory that stands for the container's own filesystem: an empty tmpfs hides the host's there. */
  readonly hide: string;
  /** Environment the cluster adds (KUBECONFIG in place of the in-cluster service account). */
  readonly clusterEnv: Readonly<Record<string, string>>;
  /**
   * Where this machine keeps the test node's sockets (a `Socket` hostPath by its path): the
   * machine's own /run/containerd is not the test's to serve.
   */
  readonly socketSources?: Readonly<Record<string, string>>;
}

function resolveEnv(container: PrintedContainer, options: LaunchOptions): string[] {
  const fields: Readonly<Record<string, string>> = {
    'spec.nodeName': options.nodeName,
    'metadata.name': options.pod.name,
    'metadata.namespace': options.pod.namespace,
  };
  return container.env.map(({ name, value, valueFrom }) => {
    if (value !== undefined) return `${name}=${value}`;
    const field = valueFrom?.fieldRef?.fieldPath ?? '';
    const resolved = fields[field];
    if (resolved === undefined) throw new Error(`the launcher has no downward-API value for ${name} (${field})`);
    return `${name}=${resolved}`;
  });
}

/** The Pod object the API server holds for the launched container: what the agent reads of itself. */
export function launchedPod(container: PrintedContainer, options: LaunchOptions) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...options.pod, uid: `${options.pod.name}-uid`, resourceVersion: '1' },
    spec: { nodeName: options.nodeName, containers: [{ name: container.name, image: container.image }] },
  };
}

const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The kubelet's part, in a private mount namespace: each hostPath volume (type Directory checked)
 * is bound at its volumeMount's mountPath, read-only when the mount says so, after `hide` has been
 * covered by an empty tmpfs, so the container sees the node's directories only through its
 * volumes. Then the printed command and args run as the printed uid/gid with no capability and
 * no_new_privs, with exactly the printed environment (plus the cluster's).
 */
export function launchScript(
  container: PrintedContainer,
  volumes: readonly PrintedVolume[],
  options: LaunchOptions,
): string {
  const lines = ['set -eu', `mount -t tmpfs stage ${quote(options.stage)}`];
  container.volumeMounts.forEach((mount, index) => {
    const volume = volumes.find((candidate) => candidate.name === mount.name);
    if (!volume?.hostPath) throw new Error(`volumeMount ${mount.name} has no hostPath volume`);
    if (volume.hostPath.type === 'Directory') lines.push(`test -d ${quote(volume.hostPath.path)}`);
    const socket = volume.hostPath.type === 'Socket';
    const source = socket
      ? (options.socketSources?.[volume.hostPath.path] ?? volume.hostPath.path)
      : volume.hostPath.path;
    if (socket) lines.push(`test -S ${quote(source)}`);
    lines.push(
      socket ? `touch ${quote(`${options.stage}/${index}`)}` : `mkdir ${quote(`${options.stage}/${index}`)}`,
      `mount --bind ${quote(source)} ${quote(`${options.stage}/${index}`)}`,
    );
  });
  lines.push(`mount -t tmpfs container ${quote(options.hide)}`);
  // A socket's mountPath (/run/containerd/containerd.sock) is outside `hide`: its top directory
  // gets a private tmpfs first, so the file the bind needs is never created on the machine.
  const socketTops = new Set(
    container.volumeMounts
      .filter((mount) => volumes.find((candidate) => candidate.name === mount.name)?.hostPath?.type === 'Socket')
      .map((mount) => `/${mount.mountPath.split('/')[1]}`),
  );
  for (const top of socketTops) lines.push(`mount -t tmpfs sockets ${quote(top)}`);
  container.volumeMounts.forEach((mount, index) => {
    const socket = volumes.find((candidate) => candidate.name === mount.name)?.hostPath?.type === 'Socket';
    lines.push(
      socket
        ? `mkdir -p "$(dirname ${quote(mount.mountPath)})" && touch ${quote(mount.mountPath)}`
        : `mkdir -p ${quote(mount.mountPath)}`,
      `mount --bind ${quote(`${options.stage}/${index}`)} ${quote(mount.mountPath)}`,
    );
    if (mount.readOnly) lines.push(`mount -o remount,bind,ro ${quote(mount.mountPath)}`);
  });
  lines.push(`umount -l ${quote(options.stage)}`);
  const { runAsUser, runAsGroup, capabilities } = container.securityContext;
  if (!capabilities?.drop?.includes('ALL')) throw new Error('the printed container keeps capabilities');
  const env = [
    `PATH=${options.imageBin}:/usr/local/bin:/usr/bin:/bin`,
    ...resolveEnv(container, options),
    ...Object.entries(options.clusterEnv).map(([key, value]) => `${key}=${value}`),
  ];
  const user = `--reuid=${runAsUser} --regid=${runAsGroup} --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs`;
  lines.push(
    `exec setpriv ${user} env -i ${env.map(quote).join(' ')} ${[...container.command, ...container.args].map(quote).join(' ')}`,
  );
  return lines.join('\n');
}

export interface LaunchedAgent {
  readonly child: ChildProcess;
  readonly logs: Record<string, unknown>[];
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * An `interlock` for the image's PATH: the built CLI as `launch` starts it (the staged,
 * world-readable copy, which the printed uid can read wherever the checkout is).
 */
export function writeImageBin(dir: string, launch: readonly string[]): string {
  const shim = join(dir, 'interlock');
  writeFileSync(shim, `#!/bin/sh\nexec ${launch.map(quote).join(' ')} "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}

/** Runs the printed container (unshare keeps one PID through the execs) and waits for its start line. */
export async function launch(script: string): Promise<LaunchedAgent> {
  const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {},
  });
  const { logs, stderr } = captureOutput(child);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await waitFor(
    'the agent to start',
    () => {
      if (child.exitCode !== null) throw new Error(`the container exited ${child.exitCode}: ${stderr()}`);
      return logs.some((line) => line.msg === 'node agent started');
    },
    20_000,
  );
  return {
    child,
    logs,
    stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 6000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
