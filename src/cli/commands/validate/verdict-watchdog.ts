import { formatDuration } from '../../../config/duration.js';
import type { Logger } from '../../../output/logger.js';
import { writeTerminationLog } from '../../../output/termination-log.js';
import type { Reason } from '../../../reason/reason.js';
import type { Progress } from '../../../validate/progress.js';
import type { Verdict } from '../../../verdict/decide-verdict.js';
import { formatTerminationMessage } from '../../../verdict/termination-message.js';

// Node 20 has Atomics.waitAsync; TypeScript's ES2023 library does not declare it yet.
type WaitAsync = (
  cell: Int32Array,
  index: number,
  value: number,
  timeoutMs: number,
) => { readonly async: boolean; readonly value: Promise<string> | string };
// Looked up when armed: a start-up snapshot is built without Atomics or SharedArrayBuffer.
const waitAsync = (): WaitAsync => (Atomics as unknown as { readonly waitAsync: WaitAsync }).waitAsync;

/** How long after the timeout the watchdog waits for the run's own verdict. */
const WATCHDOG_GRACE_MS = 500;

/**
 * When the verdict of a `--timeout` of `timeoutMs` is due, on performance.now()'s clock: it counts
 * from the process's start, so the timeout covers start-up too, and a wall-clock step moves it not.
 */
export function verdictDeadline(timeoutMs: number): number {
  return timeoutMs;
}

export interface WatchdogOptions {
  /** --timeout: the verdict is due by verdictDeadline(timeoutMs). */
  readonly timeoutMs: number;
  readonly failureExitCode: number;
  readonly terminationLog: string;
  readonly createLog: boolean;
  readonly context: readonly string[];
  readonly progress: Progress;
  readonly logger: Logger;
}

/**
 * The verdict that cannot be lost. Armed once, before any phase starts, and independent of the
 * probe and rules machinery: at the deadline plus a grace, on SIGTERM or SIGINT, or when the
 * event loop empties with no verdict, it writes a failure naming the phase and what was still
 * pending, and exits with the mesh's failure code, whatever any promise, socket or timer is doing.
 * Once the run has written its own verdict, the watchdog only makes sure the process ends with it.
 */
export class VerdictWatchdog {
  private settledExitCode: number | undefined;
  private reportUntil = 0;
  // Kept on the instance: the backstop below must live as long as the process.
  private cell: Int32Array | undefined;

  constructor(private readonly options: WatchdogOptions) {}

  arm(): void {
    // Until a verdict is written, any way out of the process is a failure, never a silent 0.
    process.exitCode = this.options.failureExitCode;
    const fire = (): void => this.expire();
    const delay = Math.max(0, verdictDeadline(this.options.timeoutMs) + WATCHDOG_GRACE_MS - performance.now());
    // Unreferenced: with nothing else left to wait for, `beforeExit` below fails the run at once.
    setTimeout(fire, delay).unref();
    // A second clock outside Node's timer lists (V8's own delayed task): it fires even if those
    // lists were wrong, as a start-up snapshot once left them.
    this.cell = new Int32Array(new SharedArrayBuffer(4));
    const backstop = waitAsync()(this.cell, 0, 0, delay + 50);
    if (typeof backstop.value !== 'string') void backstop.value.then(fire);
    process.once('beforeExit', () => this.stalled());
  }

  /**
   * The run wrote its verdict: from now on the process ends with this code. What follows (the
   * failure Event, bounded by its own 1 s) may finish within `reportMs`, even past the deadline.
   */
  settle(exitCode: number, reportMs: number): void {
    this.settledExitCode = exitCode;
    this.reportUntil = performance.now() + reportMs;
    process.exitCode = exitCode;
  }

  interrupt(signal: string): void {
    this.fail(
      'Interrupted',
      `${signal} ended the validation before a verdict, in ${this.options.progress.describe()}; failing closed`,
    );
  }

  private expire(): void {
    const reportLeft = this.reportUntil - performance.now();
    // The verdict is written: the report after it has its own bound, and then the process ends.
    if (this.settledExitCode !== undefined && reportLeft > 0) return;
    this.fail(
      'ValidationTimeout',
      `no verdict within the ${formatDuration(this.options.timeoutMs)} timeout: the validator was still in ${this.options.progress.describe()}; failing closed`,
    );
  }

  private stalled(): void {
    if (this.settledExitCode !== undefined) return;
    this.fail(
      'ValidationTimeout',
      `the validator stopped with no verdict and nothing left to wait for, in ${this.options.progress.describe()}; failing closed`,
    );
  }

  private fail(reason: Reason, message: string): void {
    if (this.settledExitCode === undefined) {
      const verdict: Verdict = { outcome: 'fail', reason, message, evidence: [], checks: [] };
      const { terminationLog, createLog, context, logger, failureExitCode } = this.options;
      this.settledExitCode = failureExitCode;
      writeTerminationLog(terminationLog, formatTerminationMessage(verdict, context), createLog);
      logger.error(
        { verdict: 'fail', reason, exitCode: failureExitCode, phase: this.options.progress.phase },
        `validation failed: ${reason}: ${message}`,
      );
    }
    process.exit(this.settledExitCode);
  }
}
