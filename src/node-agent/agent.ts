import type { ApiFailure, PodRef } from '../kube/pods-api.js';
import type { PodEventType, PodWatchSink } from '../kube/watch-pods.js';
import type { AgentApi } from './agent-api.js';
import { captureLostEvent, nodeEvent, podEvent, type AgentEvent } from './agent-events.js';
import type { AgentMetrics } from './agent-metrics.js';
import type { AgentClock, AgentLog, AgentSettings } from './agent-settings.js';
import { recordRecreation, type BackoffState } from './backoff.js';
import { blockedOf, type Blocked } from './blocked.js';
import { CLOSED_BREAKER, recordAudit, recordBlocked, tick, type BreakerStep } from './breaker.js';
import type { CniAuditVerdict } from './cni-audit-source.js';
import { CoalescingQueue } from './coalescing-queue.js';
import { decide, type Decision } from './decide.js';
import { ownerOf, podViewOf, type PodView } from './pod-view.js';
import { RateLimiter } from './rate-limiter.js';
import { retryDelayMs } from './retry-delay.js';
import type { RecheckPod } from './recheck/meshed-pod.js';
import { lostView, LOST_RUN } from './recheck/lost-view.js';
import { distrustOf } from './validator-trust.js';
import { NodeGateReporter, type GatePorts } from './node-gate-reporter.js';
import type { SandboxSighting } from './sandbox-events.js';

/**
 * Which run of a pod's validator was counted, finished with, or announced as held (by run id), and
 * which report was posted last: a pod restarting with the same reason is reported once.
 */
interface RunMemory {
  counted?: string;
  done?: string;
  held?: string;
  reported?: string;
}

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
 * The node agent: a watch sink that keeps a small view of its node's pods, counts each validator
 * failure once, and a single worker that decides and acts, one pod at a time, rate-limited.
 */
export class NodeAgent implements PodWatchSink {
  private readonly cache = new Map<string, PodView>();
  private readonly runs = new Map<string, RunMemory>();
  private readonly queue: CoalescingQueue<true>;
  private readonly retries = new Map<string, { attempts: number; cancel: () => void }>();
  private readonly limiter: RateLimiter;
  private readonly inFlight = new Set<Promise<unknown>>();
  private backoff: BackoffState = new Map();
  private breaker = CLOSED_BREAKER;
  private pausedUntil = 0;
  private wake: (() => void) | undefined;
  private stopping = false;
  private sequence = 0;
  private lastAudit: CniAuditVerdict | undefined;
  private readonly gate: NodeGateReporter | undefined;
  synced = false;
  /** The sandbox Events were listed once (the start-up taint waits for it). */
  sandboxSynced = false;

  constructor(
    private readonly settings: AgentSettings,
    private readonly deps: AgentDeps,
  ) {
    this.queue = new CoalescingQueue(settings.queueCapacity);
    this.limiter = new RateLimiter(settings.writesPerSecond, settings.writeBurst, deps.clock.now());
    this.gate = settings.gate && deps.gate ? this.gateOf(settings.gate, deps.gate) : undefined;
  }

  private gateOf(
    settings: NonNullable<AgentSettings['gate']>,
    ports: NonNullable<AgentDeps['gate']>,
  ): NodeGateReporter {
    return new NodeGateReporter(settings, {
      ...ports,
      write: (operation, call) => this.write(operation, call),
      postNodeEvent: (reason, message, type) => this.track(this.postNodeEvent(reason, message, type)),
      synced: () => this.synced && this.sandboxSynced,
      log: this.deps.log,
      clock: this.deps.clock,
      wallNow: this.deps.wallNow ?? Date.now,
    });
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
      const view = this.viewOf(pod);
      if (view) {
        seen.add(view.key);
        this.upsert(view);
      }
    }
    for (const key of [...this.cache.keys()]) if (!seen.has(key)) this.forget(key);
    this.synced = true;
    this.deps.metrics.podsWatched(this.cache.size);
  }

  changed(type: PodEventType, pod: unknown): void {
    const view = this.viewOf(pod);
    if (!view) return;
    if (type === 'DELETED') this.forget(view.key);
    else this.upsert(view);
    this.deps.metrics.podsWatched(this.cache.size);
  }

  restarted(cause: 'dropped' | 'expired' | 'error'): void {
    this.deps.metrics.watchRestart(cause);
    this.deps.log.info({ cause }, 'pod watch restarted');
  }

  apiError(failure: ApiFailure): void {
    this.deps.metrics.apiError('watch', failure.status);
    this.deps.log.warn({ status: failure.status }, failure.message);
  }

  /** A CNI audit verdict (see cni-audit-source.ts): an unhealthy one opens the breaker at once. */
  audit(verdict: CniAuditVerdict): void {
    this.deps.metrics.cniAudit(verdict.healthy);
    // The Node hears of every change of verdict, healthy or not: the first one only when it fails.
    if (
      verdict.healthy !== (this.lastAudit?.healthy ?? true) ||
      (this.lastAudit && !verdict.healthy && verdict.message !== this.lastAudit.message)
    ) {
      // Not awaited: the verdict is not held up by the API. postEvent does not reject (API failures
      // are Results, retried and logged), and stop() drains the tracked work.
      void this.track(
        this.postNodeEvent(
          verdict.healthy ? 'InterlockCniConfigHealthy' : 'InterlockCniConfigBroken',
          verdict.healthy
            ? `The CNI configuration audit of node ${this.settings.node} is healthy again.`
            : `CNI configuration audit failed: ${verdict.message}`,
          verdict.healthy ? 'Normal' : 'Warning',
        ),
      );
    }
    this.lastAudit = verdict;
    this.gate?.audit(verdict);
    this.step(
      recordAudit(this.breaker, verdict.healthy, this.deps.clock.now()),
      verdict.healthy ? '' : `CNI audit: ${verdict.message}`,
    );
  }

  /** Called on a timer: lets the breaker close after a quiet window. */
  tickBreaker(): void {
    this.step(tick(this.breaker, this.settings.breaker, this.deps.clock.now()), '');
    this.gate?.tick();
  }

  /** The pod's view, or undefined when it lacks the validator or is not on this node: the selector is the server's promise, not a proof. */
  private viewOf(pod: unknown): PodView | undefined {
    const view = podViewOf(pod, this.settings.container);
    const { namespaces } = this.settings;
    if (namespaces && view && !namespaces.includes(view.namespace)) return undefined;
    return view && view.nodeName === this.settings.node ? view : undefined;
  }

  private upsert(view: PodView): void {
    const previous = this.cache.get(view.key);
    if (previous && previous.uid !== view.uid) this.runs.delete(previous.uid);
    this.cache.set(view.key, view);
    const blocked = blockedOf(view, this.settings.failureExitCode);
    if (!blocked || view.terminating) return;
    const memory = this.memory(view.uid);
    if (memory.done === blocked.runId) return;
    if (memory.counted !== blocked.runId) {
      memory.counted = blocked.runId;
      this.deps.metrics.blocked(blocked.metricReason);
      this.deps.log.warn({ pod: view.key, reason: blocked.metricReason }, `validator failed: ${blocked.message}`);
      const at = this.breakerTimeOf(view, blocked);
      if (at !== undefined) {
        this.gate?.validatorFailure(at);
        this.step(recordBlocked(this.breaker, this.settings.breaker, ownerOf(view), this.deps.clock.now(), at), '');
      }
    }
    this.offer(view.key);
  }

  /**
   * When a failure counts toward the breaker, on the agent's clock; undefined when it does not.
   * Only failures of the node's CNI count (six pods of one misconfigured Deployment must not taint
   * a node), only of pods the agent would act on (a controller's), only runs that really were
   * Interlock as printed (validator-trust.ts: a tenant's look-alike, or the real one given another
   * port, must not open the breaker), and only
   * runs that finished within the window by the kubelet's finishedAt, so the failures of
   * yesterday do not open the breaker again at every start of the agent.
   */
  private breakerTimeOf(view: PodView, blocked: Blocked): number | undefined {
    if (!blocked.recreatable || view.ownerKind === 'Pod' || view.ownerKind === 'Node') return undefined;
    const distrust = distrustOf(view, this.settings.trustedImages, this.settings.shipped);
    if (distrust !== undefined) {
      this.deps.log.info({ pod: view.key }, `not counted toward the breaker: ${distrust}`);
      return undefined;
    }
    const finished = view.validator?.finishedAtMs;
    if (finished === undefined) return undefined;
    const age = Math.max(0, (this.deps.wallNow ?? Date.now)() - finished);
    if (age >= this.settings.breaker.windowMs) return undefined;
    return this.deps.clock.now() - age;
  }

  private forget(key: string): void {
    const view = this.cache.get(key);
    if (view) this.runs.delete(view.uid);
    this.cache.delete(key);
    this.retries.get(key)?.cancel();
    this.retries.delete(key);
  }

  private memory(uid: string): RunMemory {
    let memory = this.runs.get(uid);
    if (!memory) this.runs.set(uid, (memory = {}));
    return memory;
  }

  private offer(key: string): void {
    if (this.stopping) return;
    const outcome = this.queue.offer(key, true);
    if (outcome === 'full')
      this.deps.log.warn(
        { pod: key, capacity: this.settings.queueCapacity },
        'work queue full: the pod is picked up by a rescan once there is room',
      );
    this.deps.metrics.queueDepth(this.queue.size);
    this.wake?.();
  }

  private step(next: BreakerStep, cause: string): void {
    this.breaker = next.state;
    if (!next.transition) return;
    this.deps.metrics.breakerOpen(next.transition === 'opened');
    // Not awaited, as audit's Event: write and postEvent do not reject, and stop() drains the tracked work.
    void this.track(next.transition === 'opened' ? this.breakerOpened(cause) : this.breakerClosed());
  }

  private async breakerOpened(cause: string): Promise<void> {
    const { threshold, windowMs, minNamespaces } = this.settings.breaker;
    const why =
      cause ||
      `pods of more than ${threshold} owners in ${minNamespaces > 1 ? `at least ${minNamespaces} namespaces` : 'any namespace'} blocked within ${Math.round(windowMs / 1000)} s`;
    const taint = this.settings.taint
      ? ' Tainted interlock.dev/cni-not-ready:NoSchedule so new pods go elsewhere.'
      : '';
    this.deps.log.error({ node: this.settings.node }, `circuit breaker open: ${why}`);
    this.gate?.breaker(true, why);
    await this.postNodeEvent(
      'InterlockBreakerOpen',
      `Stopped recreating pods on node ${this.settings.node}: ${why}; the node's CNI is suspect.${taint}`,
      'Warning',
    );
    if (this.settings.taint) await this.write('taint', () => this.deps.api.setTaint(true));
  }

  private async breakerClosed(): Promise<void> {
    this.deps.log.info({ node: this.settings.node }, 'circuit breaker closed');
    this.gate?.breaker(false, '');
    if (this.settings.taint) await this.write('untaint', () => this.deps.api.setTaint(false));
    const window = Math.round(this.settings.breaker.windowMs / 1000);
    await this.postNodeEvent(
      'InterlockBreakerClosed',
      `Node ${this.settings.node} stayed healthy for ${window} s; recreating blocked pods again.`,
      'Normal',
    );
    this.rescan();
  }

  /** Offers every cached pod that is still blocked and not finished with: after the breaker closes or the queue overflowed. */
  private rescan(): void {
    for (const view of this.cache.values()) {
      const blocked = blockedOf(view, this.settings.failureExitCode);
      if (blocked && this.runs.get(view.uid)?.done !== blocked.runId) this.offer(view.key);
    }
  }

  /** The worker: one pod at a time until `stop`. */
  async run(): Promise<void> {
    while (!this.stopping) {
      const next = this.queue.take();
      this.deps.metrics.queueDepth(this.queue.size);
      if (!next) {
        if (this.queue.takeOverflow()) {
          this.rescan();
          continue;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      await this.track(this.process(next[0]));
    }
  }

  private async process(key: string): Promise<void> {
    const view = this.cache.get(key);
    const blocked = view && !view.terminating ? blockedOf(view, this.settings.failureExitCode) : undefined;
    if (!view || !blocked) return;
    const memory = this.memory(view.uid);
    if (memory.done === blocked.runId) return;
    const now = this.deps.clock.now();
    const decision = decide({
      view,
      blocked,
      action: this.settings.action,
      breakerOpen: this.breaker.open,
      backoff: this.backoff,
      policy: this.settings.backoff,
      now,
    });
    await this.carryOut(view, blocked, decision, memory);
  }

  private async carryOut(view: PodView, blocked: Blocked, decision: Decision, memory: RunMemory): Promise<void> {
    if (decision.kind === 'wait') {
      this.retryLater(view.key, decision.untilMs - this.deps.clock.now());
      return;
    }
    if (decision.kind === 'hold') {
      if (memory.held !== blocked.runId) {
        memory.held = blocked.runId;
        await this.postPodEvent(view, blocked, decision, `${decision.event}@${blocked.runId}`);
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
      await this.postPodEvent(view, blocked, decision, report);
      return;
    }
    const ref: PodRef = {
      namespace: view.namespace,
      name: view.name,
      uid: view.uid,
      resourceVersion: view.resourceVersion,
    };
    const outcome = await this.write(decision.how, () =>
      decision.how === 'delete' ? this.deps.api.deletePod(ref) : this.deps.api.labelPod(ref),
    );
    if (outcome === undefined) {
      this.retryAfterFailure(view.key);
      return;
    }
    this.retries.delete(view.key);
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
    await this.postPodEvent(view, blocked, decision, `${decision.event}@${blocked.runId}`);
  }

  /**
   * One rate-limited write. A failure pauses every write (a 429 or 500 is about the API server, not
   * this pod) for the Retry-After or an exponential delay, so failures never become a storm.
   */
  private async write<T>(
    operation: string,
    call: () => Promise<{ ok: true; value: T } | { ok: false; error: ApiFailure }>,
  ): Promise<T | undefined> {
    await this.waitForTurn();
    const answer = await call();
    if (answer.ok) {
      this.pauseAttempts = 0;
      return answer.value;
    }
    const { status, retryAfterSeconds, message } = answer.error;
    this.deps.metrics.apiError(operation, status);
    if (operation === 'delete' || operation === 'label') this.deps.metrics.action(operation, 'error');
    const delay = retryDelayMs(this.pauseAttempts++, retryAfterSeconds, this.settings.retry, this.deps.random);
    this.pausedUntil = Math.max(this.pausedUntil, this.deps.clock.now() + delay);
    this.deps.log.warn({ operation, status, retryInMs: delay }, message);
    return undefined;
  }

  private pauseAttempts = 0;

  private async waitForTurn(): Promise<void> {
    for (;;) {
      const now = this.deps.clock.now();
      if (now < this.pausedUntil) {
        await this.deps.clock.sleep(this.pausedUntil - now);
        continue;
      }
      const wait = this.limiter.tryTake(now);
      if (wait === 0) return;
      await this.deps.clock.sleep(wait);
    }
  }

  private retryAfterFailure(key: string): void {
    const attempts = (this.retries.get(key)?.attempts ?? 0) + 1;
    this.retryLater(
      key,
      Math.max(
        this.pausedUntil - this.deps.clock.now(),
        retryDelayMs(attempts, undefined, this.settings.retry, this.deps.random),
      ),
      attempts,
    );
  }

  private retryLater(key: string, ms: number, attempts = this.retries.get(key)?.attempts ?? 0): void {
    this.retries.get(key)?.cancel();
    const cancel = this.deps.clock.later(() => this.offer(key), Math.max(0, ms));
    this.retries.set(key, { attempts, cancel });
  }

  /**
   * The run memory above is this process's; the Event's name (from the pod's uid and `key`) is the
   * memory that survives a restart: an Event already on the pod answers 409 and nothing is added.
   */
  private async postPodEvent(
    view: PodView,
    blocked: Blocked,
    decision: { readonly event: string; readonly note: string },
    key: string,
  ): Promise<void> {
    const report = { reason: decision.event, note: decision.note, validatorMessage: blocked.message, key };
    const now = this.deps.clock.wall?.() ?? new Date(this.deps.clock.now());
    await this.postEvent(podEvent(view, report, this.settings.container, this.settings.node, now));
  }

  /** As the kubelet does, the node's name is the Event's uid: `kubectl describe node` looks for exactly that. */
  private async postNodeEvent(reason: string, message: string, type: 'Warning' | 'Normal'): Promise<void> {
    await this.postEvent(
      nodeEvent(
        this.settings.node,
        this.settings.node,
        reason,
        message,
        type,
        this.deps.clock.wall?.() ?? new Date(this.deps.clock.now()),
        this.sequence++,
      ),
    );
  }

  /** An Event is the agent's account of a decision: it is retried (rate-limited) a few times before it is given up and logged. */
  private async postEvent(event: AgentEvent): Promise<void> {
    for (let attempt = 0; attempt < 4; attempt++) {
      const outcome = await this.write('event', () => this.deps.api.createEvent(event));
      if (outcome === 'exists') {
        this.deps.metrics.action('event', 'exists');
        this.deps.log.info(
          { object: event.involvedObject.name, reason: event.reason },
          'already reported: its Event is there',
        );
        return;
      }
      if (outcome) {
        this.deps.metrics.action('event', 'posted');
        return;
      }
    }
    this.deps.metrics.action('event', 'error');
    this.deps.log.error(
      { object: event.involvedObject.name, reason: event.reason },
      'Event not posted after 4 attempts',
    );
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return work;
  }

  /**
   * The re-check found `pod` lost in two sweeps in a row: a Warning on it, and with `delete` the
   * same recreation as a blocked pod's (decide's preconditions, the breaker, the owner's backoff).
   * A loss says the node's CNI state was lost, never counted toward the breaker: a pod's own
   * NET_ADMIN can flush its rules, and a tenant must not open the breaker for the node.
   */
  async captureLost(pod: RecheckPod, message: string, key: string, action: 'report' | 'delete'): Promise<void> {
    if (this.stopping) return;
    this.gate?.captureLost(ownerOf(lostView(pod)));
    const now = this.deps.clock.wall?.() ?? new Date(this.deps.clock.now());
    await this.track(this.postEvent(captureLostEvent(pod, message, this.settings.node, now, key)));
    if (action === 'delete') await this.track(this.recreateLost(pod, message));
  }

  private async recreateLost(pod: RecheckPod, message: string): Promise<void> {
    if (this.stopping) return;
    const view = lostView(pod);
    const blocked = { ...LOST_RUN, message, runId: `${LOST_RUN.runId}${pod.uid}` };
    const decision = decide({
      view,
      blocked,
      action: 'delete',
      breakerOpen: this.breaker.open,
      backoff: this.backoff,
      policy: this.settings.backoff,
      now: this.deps.clock.now(),
    });
    if (decision.kind === 'wait') {
      this.deps.clock.later(
        () => void this.track(this.recreateLost(pod, message)),
        decision.untilMs - this.deps.clock.now(),
      );
      return;
    }
    await this.carryOut(view, blocked, decision, this.memory(view.uid));
  }

  /** Stops taking work and waits for in-flight actions (and their Events) up to `deadlineMs`. */
  async stop(deadlineMs: number): Promise<boolean> {
    this.stopping = true;
    this.wake?.();
    for (const retry of this.retries.values()) retry.cancel();
    const drained = Promise.allSettled([...this.inFlight]).then(() => true);
    const timeout = new Promise<boolean>((resolve) => this.deps.clock.later(() => resolve(false), deadlineMs));
    return Promise.race([drained, timeout]);
  }
}
