import type { LostReason } from './recheck/pod-capture.js';
import type { ApiFailure, PodRef } from '../kube/pods-api.js';
import type { PodEventType, PodWatchSink } from '../kube/watch-pods.js';
import type { AgentApi } from './agent-api.js';
import { captureLostEvent } from './agent-events.js';
import type { AgentMetrics } from './agent-metrics.js';
import type { AgentClock, AgentLog, AgentSettings } from './agent-settings.js';
import { ApiWriter } from './api-writer.js';
import { recordRecreation, type BackoffState } from './backoff.js';
import { blockedOf, type Blocked } from './blocked.js';
import { recordAudit, recordBlocked, tick } from './breaker.js';
import { breakerCountOf } from './breaker-count.js';
import { auditCause, auditEventOf, type NodeEventText } from './breaker-text.js';
import type { CniAuditVerdict } from './cni-audit-source.js';
import { decide, type Decision } from './decide.js';
import { EventPoster } from './event-poster.js';
import { InFlight } from './in-flight.js';
import { NodeBreaker } from './node-breaker.js';
import { NodeGateReporter, type GatePorts } from './node-gate-reporter.js';
import { PodCache, type RunMemory } from './pod-cache.js';
import { scopedViewOf } from './pod-scope.js';
import { ownerOf, type PodView } from './pod-view.js';
import type { RecheckPod } from './recheck/meshed-pod.js';
import { lostView, LOST_RUN } from './recheck/lost-view.js';
import { retryDelayMs } from './retry-delay.js';
import { RetryTimers } from './retry-timers.js';
import type { SandboxSighting } from './sandbox-events.js';
import { WorkLoop } from './work-loop.js';

export interface AgentDeps {
  readonly api: AgentApi;
  readonly metrics: AgentMetrics;
  readonly log: AgentLog;
  readonly clock: AgentClock;
  readonly random: () => number;
  /**
   * The wall clock, to age a run by the kubelet's finishedAt (written on this node, by its clock);
   * the agent's own timing stays on `clock`. Date.now when not given.
   */
  readonly wallNow?: () => number;
  /** With `settings.gate`: the node's reads and writes, and the gate's metrics. */
  readonly gate?: Pick<GatePorts, 'readNode' | 'patchCondition' | 'removeStartupTaint' | 'metrics'>;
}

/**
 * The node agent: a watch sink that keeps a small view of its node's pods (pod-cache.ts), counts
 * each validator failure once toward the breaker (breaker-count.ts, node-breaker.ts), and a single
 * worker (work-loop.ts) that decides (decide.ts) and acts, one pod at a time, through one
 * rate-limited writer (api-writer.ts) and its Events (event-poster.ts). This class only wires them.
 */
export class NodeAgent implements PodWatchSink {
  private readonly pods = new PodCache();
  private readonly work: WorkLoop;
  private readonly retries: RetryTimers;
  private readonly writer: ApiWriter;
  private readonly events: EventPoster;
  private readonly breaker: NodeBreaker;
  private readonly inFlight = new InFlight();
  private backoff: BackoffState = new Map();
  private lastAudit: CniAuditVerdict | undefined;
  private readonly gate: NodeGateReporter | undefined;
  synced = false;
  /** The sandbox Events were listed once (the start-up taint waits for it). */
  sandboxSynced = false;

  constructor(
    private readonly settings: AgentSettings,
    private readonly deps: AgentDeps,
  ) {
    this.work = new WorkLoop(settings.queueCapacity, deps);
    this.retries = new RetryTimers(deps.clock);
    this.writer = new ApiWriter(settings, deps);
    this.events = new EventPoster(settings.node, settings.container, { ...deps, writer: this.writer });
    this.gate = settings.gate && deps.gate ? this.gateOf(settings.gate, deps.gate) : undefined;
    this.breaker = new NodeBreaker(settings, {
      ...deps,
      writer: this.writer,
      postNodeEvent: (text) => this.postNodeEvent(text),
      gate: (open, why) => this.gate?.breaker(open, why),
      track: (work) => this.inFlight.track(work),
      rescan: () => this.rescan(),
    });
  }

  private gateOf(
    settings: NonNullable<AgentSettings['gate']>,
    ports: NonNullable<AgentDeps['gate']>,
  ): NodeGateReporter {
    return new NodeGateReporter(settings, {
      ...ports,
      write: (operation, call) => this.writer.write(operation, call),
      postNodeEvent: (reason, message, type) => this.inFlight.track(this.events.postNode(reason, message, type)),
      synced: () => this.synced && this.sandboxSynced,
      log: this.deps.log,
      clock: this.deps.clock,
      wallNow: this.wallNow(),
    });
  }

  private wallNow(): () => number {
    return this.deps.wallNow ?? Date.now;
  }

  private postNodeEvent(text: NodeEventText): Promise<void> {
    return this.events.postNode(text.reason, text.message, text.type);
  }

  /** A mesh plugin failure from a kubelet Event of this node (the node gate's input). */
  sandboxSighting(sighting: SandboxSighting): void {
    this.gate?.sandbox(sighting);
  }

  get breakerOpen(): boolean {
    return this.breaker.open;
  }

  relisted(pods: readonly unknown[]): void {
    const seen = new Set<string>();
    for (const pod of pods) {
      const view = scopedViewOf(pod, this.settings);
      if (view) {
        seen.add(view.key);
        this.upsert(view);
      }
    }
    for (const key of this.pods.keys()) if (!seen.has(key)) this.forget(key);
    this.synced = true;
    this.deps.metrics.podsWatched(this.pods.size);
  }

  changed(type: PodEventType, pod: unknown): void {
    const view = scopedViewOf(pod, this.settings);
    if (!view) return;
    if (type === 'DELETED') this.forget(view.key);
    else this.upsert(view);
    this.deps.metrics.podsWatched(this.pods.size);
  }

  restarted(cause: 'dropped' | 'expired' | 'error'): void {
    this.deps.metrics.watchRestart(cause);
    this.deps.log.info({ cause }, 'pod watch restarted');
  }

  apiError(failure: ApiFailure): void {
    this.deps.metrics.apiError('watch', failure.status);
    this.deps.log.warn({ status: failure.status }, failure.message);
  }

  /**
   * A CNI audit verdict (see cni-audit-source.ts). An unhealthy one is a prediction: it opens the
   * breaker only with a counted validator failure on this node within the window (breaker.ts).
   */
  audit(verdict: CniAuditVerdict): void {
    this.deps.metrics.cniAudit(verdict.healthy);
    const event = auditEventOf(this.lastAudit, verdict, this.settings.node);
    // Not awaited: the verdict is not held up by the API. Posting does not reject (API failures
    // are Results, retried and logged), and stop() drains the tracked work.
    if (event) void this.inFlight.track(this.postNodeEvent(event));
    this.lastAudit = verdict;
    this.gate?.audit(verdict);
    this.breaker.step(
      recordAudit(this.breaker.current, this.settings.breaker, verdict.healthy, this.deps.clock.now()),
      verdict.healthy ? '' : auditCause(verdict.message, this.settings.breaker),
    );
  }

  /** Called on a timer: lets the breaker close after a quiet window. */
  tickBreaker(): void {
    this.breaker.step(tick(this.breaker.current, this.settings.breaker, this.deps.clock.now()), '');
    this.gate?.tick();
  }

  private upsert(view: PodView): void {
    this.pods.upsert(view);
    const blocked = blockedOf(view, this.settings.failureExitCode);
    if (!blocked || view.terminating) return;
    const memory = this.pods.memory(view.uid);
    if (memory.done === blocked.runId) return;
    if (memory.counted !== blocked.runId) {
      memory.counted = blocked.runId;
      this.count(view, blocked);
    }
    this.work.offer(view.key);
  }

  /** A validator failure seen for the first time: its metric and log line, and the breaker's count. */
  private count(view: PodView, blocked: Blocked): void {
    this.deps.metrics.blocked(blocked.metricReason);
    this.deps.log.warn({ pod: view.key, reason: blocked.metricReason }, `validator failed: ${blocked.message}`);
    const { trustedImages, shipped, breaker } = this.settings;
    const now = this.deps.clock.now();
    const count = breakerCountOf(view, blocked, {
      trustedImages,
      shipped,
      windowMs: breaker.windowMs,
      now,
      wallNow: this.wallNow()(),
    });
    if (!count.counted) {
      if (count.distrust !== undefined)
        this.deps.log.info({ pod: view.key }, `not counted toward the breaker: ${count.distrust}`);
      return;
    }
    this.gate?.validatorFailure(count.at);
    const audit = this.lastAudit;
    this.breaker.step(
      recordBlocked(this.breaker.current, breaker, ownerOf(view), now, count.at),
      audit && !audit.healthy ? auditCause(audit.message, breaker) : '',
    );
  }

  private forget(key: string): void {
    this.pods.forget(key);
    this.retries.forget(key);
  }

  /** Offers every cached pod that is still blocked and not finished with: after the breaker closes or the queue overflowed. */
  private rescan(): void {
    for (const view of this.pods.all()) {
      const blocked = blockedOf(view, this.settings.failureExitCode);
      if (blocked && this.pods.doneRun(view.uid) !== blocked.runId) this.work.offer(view.key);
    }
  }

  /** The worker: one pod at a time until `stop`. */
  async run(): Promise<void> {
    await this.work.run(
      (key) => this.inFlight.track(this.process(key)),
      () => this.rescan(),
    );
  }

  private async process(key: string): Promise<void> {
    const view = this.pods.get(key);
    const blocked = view && !view.terminating ? blockedOf(view, this.settings.failureExitCode) : undefined;
    if (!view || !blocked) return;
    const memory = this.pods.memory(view.uid);
    if (memory.done === blocked.runId) return;
    await this.carryOut(view, blocked, this.decide(view, blocked, this.settings.action), memory);
  }

  private decide(view: PodView, blocked: Blocked, action: AgentSettings['action']): Decision {
    return decide({
      view,
      blocked,
      action,
      breakerOpen: this.breaker.open,
      backoff: this.backoff,
      policy: this.settings.backoff,
      now: this.deps.clock.now(),
    });
  }

  private async carryOut(view: PodView, blocked: Blocked, decision: Decision, memory: RunMemory): Promise<void> {
    if (decision.kind === 'wait') {
      this.retryLater(view.key, decision.untilMs - this.deps.clock.now());
      return;
    }
    if (decision.kind === 'hold') {
      if (memory.held !== blocked.runId) {
        memory.held = blocked.runId;
        await this.events.postPod(view, blocked, decision, `${decision.event}@${blocked.runId}`);
      }
      this.deps.metrics.action('none', 'held');
      return;
    }
    if (decision.kind === 'report') {
      memory.done = blocked.runId;
      const report = `${decision.event}/${blocked.reason}`;
      if (memory.reported === report) return;
      memory.reported = report;
      this.deps.metrics.action('report', decision.event);
      await this.events.postPod(view, blocked, decision, report);
      return;
    }
    await this.recreate(view, blocked, decision, memory);
  }

  private async recreate(
    view: PodView,
    blocked: Blocked,
    decision: Extract<Decision, { kind: 'recreate' }>,
    memory: RunMemory,
  ): Promise<void> {
    const ref: PodRef = {
      namespace: view.namespace,
      name: view.name,
      uid: view.uid,
      resourceVersion: view.resourceVersion,
    };
    const outcome = await this.writer.write(decision.how, () =>
      decision.how === 'delete' ? this.deps.api.deletePod(ref) : this.deps.api.labelPod(ref),
    );
    if (outcome === undefined) {
      this.retryAfterFailure(view.key);
      return;
    }
    this.retries.succeeded(view.key);
    this.deps.metrics.action(decision.how, outcome);
    if (outcome === 'precondition-failed') {
      // The name now belongs to a new pod, or this one changed since it was read: its next version decides.
      this.deps.log.info(
        { pod: view.key, uid: view.uid },
        `${decision.how} refused by its preconditions: the pod changed or was replaced; spared`,
      );
      return;
    }
    memory.done = blocked.runId;
    if (outcome === 'already-gone') return;
    this.backoff = recordRecreation(this.backoff, ownerOf(view).owner, this.settings.backoff, this.deps.clock.now());
    await this.events.postPod(view, blocked, decision, `${decision.event}@${blocked.runId}`);
  }

  private retryAfterFailure(key: string): void {
    const attempts = this.retries.attempts(key) + 1;
    const delay = retryDelayMs(attempts, undefined, this.settings.retry, this.deps.random);
    this.retryLater(key, Math.max(this.writer.pausedUntil - this.deps.clock.now(), delay), attempts);
  }

  private retryLater(key: string, ms: number, attempts?: number): void {
    this.retries.later(key, ms, () => this.work.offer(key), attempts);
  }

  /**
   * The re-check found `pod` lost in two sweeps in a row: a Warning on it, and with `delete` the
   * same recreation as a blocked pod's (decide's preconditions, the breaker, the owner's backoff).
   * A loss says the node's CNI state was lost, never counted toward the breaker: a pod's own
   * NET_ADMIN can flush its rules, and a tenant must not open the breaker for the node.
   */
  async captureLost(
    pod: RecheckPod,
    message: string,
    key: string,
    action: 'report' | 'delete',
    reason: LostReason = 'CaptureLost',
  ): Promise<void> {
    if (this.work.stopping) return;
    this.gate?.captureLost(ownerOf(lostView(pod)));
    const event = captureLostEvent(pod, message, this.settings.node, this.events.wall(), key, reason);
    await this.inFlight.track(this.events.post(event));
    if (action === 'delete') await this.inFlight.track(this.recreateLost(pod, message));
  }

  private async recreateLost(pod: RecheckPod, message: string): Promise<void> {
    if (this.work.stopping) return;
    const view = lostView(pod);
    const blocked = { ...LOST_RUN, message, runId: `${LOST_RUN.runId}${pod.uid}` };
    const decision = this.decide(view, blocked, 'delete');
    if (decision.kind === 'wait') {
      this.deps.clock.later(
        () => void this.inFlight.track(this.recreateLost(pod, message)),
        decision.untilMs - this.deps.clock.now(),
      );
      return;
    }
    await this.carryOut(view, blocked, decision, this.pods.memory(view.uid));
  }

  /** Stops taking work and waits for in-flight actions (and their Events) up to `deadlineMs`. */
  async stop(deadlineMs: number): Promise<boolean> {
    this.work.stop();
    this.retries.cancelAll();
    return this.inFlight.drain(this.deps.clock, deadlineMs);
  }
}
