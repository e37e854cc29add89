import type { AgentClock, AgentLog } from '../agent-settings.js';
import type { Memory } from './agreement.js';
import type { RecheckAction } from './recheck-action.js';
import type { RecheckPod } from './meshed-pod.js';
import type { RecheckMetrics } from './recheck-metrics.js';
import type { LostReason } from './pod-capture.js';
import { sweep, type SweepOutcome, type SweepPorts, type SweepSettings } from './sweep.js';

export interface RecheckSettings extends SweepSettings {
  readonly intervalMs: number;
  readonly action: RecheckAction;
}

/** Where a confirmed loss goes: the agent posts the Event (its reason the loss's) and, with `delete`, recreates. */
export interface LossReporter {
  captureLost(pod: RecheckPod, message: string, key: string, action: RecheckAction, reason?: LostReason): Promise<void>;
}

/** The Event's first words, per reason: a capture gone, or its listeners (an outage of the pod's traffic). */
const LOST_WORDS: Readonly<Record<LostReason, string>> = {
  CaptureLost: 'Capture lost after the pod started',
  ZtunnelNotListening: "ztunnel's listeners gone after the pod started",
};

export interface RecheckDeps {
  readonly pods: () => readonly RecheckPod[];
  /** Running pods the roster refused for want of a slot: never checked, so said every sweep. */
  readonly overflow: () => number;
  readonly ports: SweepPorts;
  readonly reporter: LossReporter;
  readonly metrics: RecheckMetrics;
  readonly log: AgentLog;
  readonly clock: AgentClock;
}

/**
 * The re-check: one sweep, then the next one `intervalMs` after this one started (or at once when
 * a sweep took longer): sweeps never overlap. Stopped by `stop`, which waits for the sweep running.
 */
export class RecheckLoop {
  private memory: Memory = new Map();
  private stopped = false;
  private cancel: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private sequence = 0;

  constructor(
    private readonly settings: RecheckSettings,
    private readonly deps: RecheckDeps,
  ) {}

  start(): void {
    this.schedule(this.settings.intervalMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.cancel = this.deps.clock.later(() => {
      this.running = this.once().then(
        () => (this.running = undefined),
        (error: unknown) => {
          // A bug, not a verdict: said, and the next sweep still comes.
          this.deps.log.error(
            { error: error instanceof Error ? error.message : String(error) },
            're-check sweep failed',
          );
          this.running = undefined;
          this.schedule(this.settings.intervalMs);
        },
      );
    }, ms);
  }

  /** One sweep and its reports (exported for tests and the benchmark). */
  async once(): Promise<SweepOutcome> {
    const started = this.deps.clock.now();
    const outcome = await sweep(this.deps.pods(), this.memory, this.deps.ports, {
      ...this.settings,
      sweepBudgetMs: this.settings.intervalMs,
    });
    this.memory = outcome.memory;
    this.sequence += 1;
    await this.report(outcome, (this.deps.clock.now() - started) / 1000);
    this.schedule(Math.max(0, this.settings.intervalMs - (this.deps.clock.now() - started)));
    return outcome;
  }

  private async report(outcome: SweepOutcome, seconds: number): Promise<void> {
    const counts = { captured: 0, lost: 0, unknown: 0 };
    for (const { check } of outcome.results) counts[check.kind] += 1;
    this.deps.metrics.sweep(seconds, counts);
    for (const [cause, count] of outcome.unknownByCause) this.deps.metrics.unknown(cause, count);
    this.deps.metrics.lostPods(outcome.lostByMode);
    const overflow = this.deps.overflow();
    this.deps.metrics.rosterOverflow(overflow);
    // One line per sweep: the counts, and one example of each cause of unknown (a bounded set).
    const examples: Record<string, string> = {};
    for (const { pod, check } of outcome.results)
      if (check.kind === 'unknown') examples[check.cause] ??= `${pod.key}: ${check.message.slice(0, 300)}`;
    this.deps.log.info(
      {
        sweep: this.sequence,
        seconds: Math.round(seconds * 1000) / 1000,
        ...counts,
        notChecked: overflow,
        unknownByCause: Object.fromEntries(outcome.unknownByCause),
        unknownExamples: examples,
      },
      're-check sweep finished',
    );
    if (overflow > 0)
      this.deps.log.warn(
        { sweep: this.sequence, notChecked: overflow },
        `${overflow} running pods of this node were not re-checked: the roster keeps 256 at most`,
      );
    for (const pod of outcome.recovered)
      this.deps.log.info(
        { pod: pod.key, uid: pod.uid },
        'capture is back: the re-check finds the rules in place again',
      );
    const wall = (this.deps.clock.wall?.() ?? new Date()).getTime();
    for (const { pod, mode, check } of outcome.confirmed) {
      if (check.kind !== 'lost') continue;
      const message = `${LOST_WORDS[check.reason]} (${mode}; two sweeps agree): ${check.message}`;
      this.deps.log.warn(
        { pod: pod.key, uid: pod.uid, mesh: mode, reason: check.reason, evidence: check.evidence },
        message,
      );
      if (!this.stopped)
        await this.deps.reporter.captureLost(
          pod,
          message,
          `${check.reason}@${wall}`,
          this.settings.action,
          check.reason,
        );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    await this.running;
  }
}
