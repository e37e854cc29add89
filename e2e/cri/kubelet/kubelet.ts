import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CriCallError, type CriClient, type Message } from '../cri-client.js';
import { realClock, RestartBackOff, goDuration, type Clock } from './backoff.js';
import { containerConfig, sandboxConfig } from './container-config.js';
import { rfc3339, statusJson, waiting, type ContainerStatus, type State } from './container-status.js';
import type { ContainerSpec, PodObject } from './pod-spec.js';
import type { Publisher } from './publisher.js';
import { terminationMessage } from './termination.js';
import { volumeMounts } from './downward-volume.js';

/** The node the kubelet runs pods on (CriNode in the scenarios). */
export interface KubeletNode {
  readonly cri: CriClient;
  readonly root: string;
  readonly cgroupParent: string;
  readonly interlockImage: string;
}

export interface KubeletOptions {
  readonly node: KubeletNode;
  readonly nodeName: string;
  readonly publisher: Publisher;
  readonly clock?: Clock;
  /** The image each container runs: the scenarios run every validator from Interlock's image. */
  readonly imageOf?: (container: ContainerSpec) => string;
}

/** One finished run of a container, with the runtime's own timestamps (nanoseconds). */
export interface Attempt {
  readonly name: string;
  readonly attempt: number;
  readonly containerId: string;
  readonly exitCode: number;
  readonly message: string;
  readonly startedAtNs: number;
  readonly finishedAtNs: number;
  /** When the kubelet called StartContainer (wall clock, ms), for start-to-exit as the kubelet sees it. */
  readonly startCalledAtMs: number;
  readonly logPath: string;
}

export type PodOutcome =
  | { readonly kind: 'running'; readonly podIP: string }
  | { readonly kind: 'failed'; readonly container: string }
  | { readonly kind: 'sandbox-failed'; readonly error: string }
  | { readonly kind: 'stopped' };

/**
 * A kubelet for one node, reduced to what a pod's start needs: RunPodSandbox, then the init
 * containers one at a time (the next only after exit 0; a native sidecar only has to start), a
 * failed one restarted with the kubelet's back-off, then the app containers. After every change it
 * publishes the pod status and Events the kubelet would.
 */
export class Kubelet {
  private readonly backoff = new RestartBackOff();
  readonly clock: Clock;

  constructor(readonly options: KubeletOptions) {
    this.clock = options.clock ?? realClock;
  }

  start(pod: PodObject): PodRun {
    return new PodRun(this, pod, this.backoff);
  }
}

/** One pod on the node, from RunPodSandbox to removal. */
export class PodRun {
  readonly attempts: Attempt[] = [];
  readonly statuses = new Map<string, ContainerStatus>();
  readonly timings: { sandboxRequestedMs?: number; sandboxReadyMs?: number; appStartedMs?: number } = {};
  readonly outcome: Promise<PodOutcome>;
  sandboxId: string | undefined;
  private readonly abort = new AbortController();
  private phase = 'Pending';
  private podIP = '';
  private stopping: Promise<void> | undefined;
  private readonly startCalls = new Map<string, number>();

  constructor(
    private readonly kubelet: Kubelet,
    readonly pod: PodObject,
    private readonly backoff: RestartBackOff,
  ) {
    this.outcome = this.run().catch((error: unknown) => {
      if (this.abort.signal.aborted) return { kind: 'stopped' } as const;
      throw error;
    });
  }

  private get cri(): CriClient {
    return this.kubelet.options.node.cri;
  }
  private get podDir(): string {
    return join(this.kubelet.options.node.root, 'pods', this.pod.metadata.uid);
  }
  private get logDirectory(): string {
    const { namespace, name, uid } = this.pod.metadata;
    return join(this.kubelet.options.node.root, 'logs', `${namespace}_${name}_${uid}`);
  }
  /** The pod's cgroup, under the node's: the kubelet makes and removes it, not containerd. */
  get cgroupParent(): string {
    return `${this.kubelet.options.node.cgroupParent}/pod${this.pod.metadata.uid}`;
  }

  private async run(): Promise<PodOutcome> {
    for (const container of [...(this.pod.spec.initContainers ?? []), ...this.pod.spec.containers])
      this.statuses.set(container.name, initialStatus(container, this.imageOf(container)));
    await this.publish();
    const sandbox = await this.runSandbox();
    if (sandbox.kind !== 'ok') return sandbox.outcome;
    for (const container of this.pod.spec.initContainers ?? []) {
      const passed =
        container.restartPolicy === 'Always' ? await this.startSidecar(container) : await this.runInit(container);
      if (!passed) {
        this.phase = this.pod.spec.restartPolicy === 'Never' ? 'Failed' : 'Pending';
        await this.publish();
        return this.abort.signal.aborted ? { kind: 'stopped' } : { kind: 'failed', container: container.name };
      }
    }
    for (const container of this.pod.spec.containers) await this.startContainer(container, 0);
    this.timings.appStartedMs = performance.now();
    this.phase = 'Running';
    await this.publish();
    return { kind: 'running', podIP: this.podIP };
  }

  private async runSandbox(): Promise<{ kind: 'ok' } | { kind: 'failed'; outcome: PodOutcome }> {
    await mkdir(this.logDirectory, { recursive: true });
    const config = sandboxConfig(this.pod, 0, this.logDirectory, this.cgroupParent);
    this.timings.sandboxRequestedMs = performance.now();
    try {
      const reply = await this.cri.call('RunPodSandbox', { config });
      this.sandboxId = String(reply['pod_sandbox_id']);
    } catch (error) {
      // The kubelet's Event: "Failed to create pod sandbox: %v" of the runtime's status error.
      const message = `Failed to create pod sandbox: ${error instanceof CriCallError ? error.goText : (error as Error).message}`;
      await this.event('Warning', 'FailedCreatePodSandBox', message);
      return { kind: 'failed', outcome: { kind: 'sandbox-failed', error: message } };
    }
    this.timings.sandboxReadyMs = performance.now();
    const status = await this.cri.call('PodSandboxStatus', { pod_sandbox_id: this.sandboxId });
    const network = (status['status'] as Message | undefined)?.['network'] as Message | undefined;
    this.podIP = String(network?.['ip'] ?? '');
    return { kind: 'ok' };
  }

  /** Runs an init container until it exits 0, restarting it with back-off; false when the pod gives up or is stopped. */
  private async runInit(container: ContainerSpec): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const run = await this.runToExit(container, attempt);
      if (!run) return false;
      if (run.exitCode === 0) return true;
      if (this.pod.spec.restartPolicy === 'Never') return false;
      const delay = this.backoff.next(`${this.pod.metadata.uid}/${container.name}`);
      const previous = this.statuses.get(container.name) as ContainerStatus;
      const message = `back-off ${goDuration(delay)} restarting failed container=${container.name} pod=${this.pod.metadata.name}_${this.pod.metadata.namespace}(${this.pod.metadata.uid})`;
      this.statuses.set(container.name, {
        ...previous,
        state: waiting('CrashLoopBackOff', message),
        lastState: previous.state,
      });
      await this.publish();
      await this.event('Warning', 'BackOff', 'Back-off restarting failed container', container);
      if (!(await this.kubelet.clock.sleep(delay, this.abort.signal))) return false;
      this.statuses.set(container.name, {
        ...(this.statuses.get(container.name) as ContainerStatus),
        restartCount: attempt + 1,
      });
    }
  }

  private async startSidecar(container: ContainerSpec): Promise<boolean> {
    const id = await this.startContainer(container, 0);
    const status = await this.containerStatus(id);
    return status['state'] === 'CONTAINER_RUNNING';
  }

  private async runToExit(container: ContainerSpec, attempt: number): Promise<Attempt | undefined> {
    const id = await this.startContainer(container, attempt);
    let status = await this.containerStatus(id);
    while (status['state'] !== 'CONTAINER_EXITED') {
      if (this.abort.signal.aborted) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await this.containerStatus(id);
    }
    const exitCode = Number(status['exit_code']);
    const policy = container.terminationMessagePolicy ?? 'File';
    const logPath = join(this.logDirectory, `${container.name}/${attempt}.log`);
    const message = await terminationMessage({
      hostFile: this.terminationFile(container, attempt),
      logPath,
      policy,
      exitCode,
    });
    const run: Attempt = {
      name: container.name,
      attempt,
      containerId: id,
      exitCode,
      message,
      startedAtNs: Number(status['started_at']),
      finishedAtNs: Number(status['finished_at']),
      startCalledAtMs: this.startCalls.get(id) ?? NaN,
      logPath,
    };
    this.attempts.push(run);
    const previous = this.statuses.get(container.name) as ContainerStatus;
    this.statuses.set(container.name, {
      ...previous,
      ready: false,
      started: false,
      state: terminatedState(run, status),
    });
    await this.publish();
    return run;
  }

  private terminationFile(container: ContainerSpec, attempt: number): string {
    return join(this.podDir, 'containers', container.name, String(attempt));
  }

  /** CreateContainer and StartContainer, with the kubelet's Events and status; the container id. */
  private async startContainer(container: ContainerSpec, attempt: number): Promise<string> {
    const image = this.imageOf(container);
    const terminationFile = this.terminationFile(container, attempt);
    await mkdir(join(this.podDir, 'containers', container.name), { recursive: true });
    await writeFile(terminationFile, '');
    await chmod(terminationFile, 0o666);
    await this.event('Normal', 'Pulled', `Container image "${container.image}" already present on machine`, container);
    const config = containerConfig({
      pod: this.pod,
      container,
      image,
      attempt,
      logPath: `${container.name}/${attempt}.log`,
      terminationFile,
      podIP: this.podIP,
      volumeMounts: await volumeMounts(this.pod, container, this.podDir),
    });
    const sandboxConfigMessage = sandboxConfig(this.pod, 0, this.logDirectory, this.cgroupParent);
    const created = await this.cri.call('CreateContainer', {
      pod_sandbox_id: this.sandboxId,
      config,
      sandbox_config: sandboxConfigMessage,
    });
    const id = String(created['container_id']);
    await this.event('Normal', 'Created', `Created container ${container.name}`, container);
    this.startCalls.set(id, Date.now());
    await this.cri.call('StartContainer', { container_id: id });
    await this.event('Normal', 'Started', `Started container ${container.name}`, container);
    const status = await this.containerStatus(id);
    const previous = this.statuses.get(container.name) as ContainerStatus;
    this.statuses.set(container.name, {
      ...previous,
      containerID: `containerd://${id}`,
      started: true,
      ready: container.restartPolicy === 'Always' || !(this.pod.spec.initContainers ?? []).includes(container),
      state: { running: { startedAt: rfc3339(Number(status['started_at'])) } },
    });
    await this.publish();
    return id;
  }

  private async containerStatus(id: string): Promise<Message> {
    const reply = await this.cri.call('ContainerStatus', { container_id: id });
    return reply['status'] as Message;
  }

  private imageOf(container: ContainerSpec): string {
    return this.kubelet.options.imageOf?.(container) ?? this.kubelet.options.node.interlockImage;
  }

  private async event(
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    container?: ContainerSpec,
  ): Promise<void> {
    const init = container && (this.pod.spec.initContainers ?? []).includes(container);
    const fieldPath = container ? `spec.${init ? 'initContainers' : 'containers'}{${container.name}}` : undefined;
    await this.kubelet.options.publisher.event(this.pod, {
      type,
      reason,
      message,
      ...(fieldPath ? { fieldPath } : {}),
    });
  }

  /** The pod's status as the kubelet's status manager would send it. */
  statusJson(): Record<string, unknown> {
    const init = (this.pod.spec.initContainers ?? []).map((c) => this.statuses.get(c.name) as ContainerStatus);
    const app = this.pod.spec.containers.map((c) => this.statuses.get(c.name) as ContainerStatus);
    const initialized = init.every((s) =>
      'terminated' in s.state ? s.state.terminated.exitCode === 0 : s.started === true,
    );
    const ready = this.phase === 'Running';
    const condition = (type: string, value: boolean) => ({ type, status: value ? 'True' : 'False' });
    return {
      phase: this.phase,
      conditions: [
        condition('Initialized', initialized),
        condition('Ready', ready),
        condition('ContainersReady', ready),
        condition('PodScheduled', true),
      ],
      ...(this.podIP ? { podIP: this.podIP, podIPs: [{ ip: this.podIP }] } : {}),
      initContainerStatuses: init.map(statusJson),
      containerStatuses: app.map(statusJson),
    };
  }

  private async publish(): Promise<void> {
    await this.kubelet.options.publisher.status(this.pod, this.statusJson());
  }

  /** What the kubelet does for a deleted pod: stop waiting, stop and remove the sandbox. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.teardown();
    return this.stopping;
  }

  private async teardown(): Promise<void> {
    this.abort.abort();
    await this.outcome.catch(() => undefined);
    if (!this.sandboxId) return;
    // A sandbox already gone (removed by an earlier stop, or never made whole) is what we want.
    const gone = (error: Error) => {
      if (!/NOT_FOUND|not found/.test(error.message)) throw error;
    };
    await this.cri.call('StopPodSandbox', { pod_sandbox_id: this.sandboxId }).catch(gone);
    await this.cri.call('RemovePodSandbox', { pod_sandbox_id: this.sandboxId }).catch(gone);
  }
}

function initialStatus(container: ContainerSpec, image: string): ContainerStatus {
  return {
    name: container.name,
    image,
    ready: false,
    restartCount: 0,
    state: waiting('PodInitializing'),
    lastState: {},
  };
}

function terminatedState(run: Attempt, status: Message): State {
  return {
    terminated: {
      exitCode: run.exitCode,
      reason: String(status['reason'] || (run.exitCode === 0 ? 'Completed' : 'Error')),
      message: run.message,
      startedAt: rfc3339(run.startedAtNs),
      finishedAt: rfc3339(run.finishedAtNs),
      containerID: `containerd://${run.containerId}`,
    },
  };
}
