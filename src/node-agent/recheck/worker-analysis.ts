import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AnalysisAnswer, AnalysisRequest } from './analysis-request.js';

/**
 * How one analysis worker may grow. A pod's rules are a few kilobytes and parse into well under a
 * MiB; the live readers accept at most 1 MiB of iptables-save and 2 MiB of nft JSON
 * (src/rules/limits.ts). A worker's heap past this is stopped by V8 (ERR_WORKER_OUT_OF_MEMORY) and
 * the pod is unknown, too large, never the agent's OOM: with the sweep's 4 pods at once, the
 * workers' heaps take at most 4 x (32 + 4) MiB beside the agent's own.
 */
export const ANALYSIS_WORKER_LIMITS = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4, stackSizeMb: 4 };

/** How one worker ended: its answer, its deadline, its heap cap, or a failure (a bug, a missing file). */
export type WorkerOutcome =
  | { readonly kind: 'answered'; readonly answer: AnalysisAnswer }
  | { readonly kind: 'deadline'; readonly ms: number }
  | { readonly kind: 'too-large'; readonly message: string }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * The worker's file, beside the code that starts it: `rules-worker.cjs` beside a bundle (the npm
 * bin's dist/bin, the image's interlock.commands.cjs), `rules-worker.js` beside tsc's modules.
 */
export function rulesWorkerFile(): string {
  if (typeof __dirname === 'string') return join(__dirname, 'rules-worker.cjs');
  return fileURLToPath(new URL('./rules-worker.js', import.meta.url));
}

/** How long an idle worker is kept for the next pod: a sweep reuses them, the time between sweeps does not. */
const IDLE_MS = 2000;

/** How long past a pod's deadline a worker may still answer (and be kept) before it is terminated. */
const LATE_GRACE_MS = 2000;

/**
 * The re-check's analysis workers: one per pod checked at once, each reused pod after pod within
 * a sweep (a worker's start costs about 30 ms of CPU: on a starved node, more than a pod's
 * deadline leaves) and ended when idle. A worker still busy 2 s past the pod's deadline, or past
 * its heap cap, is terminated, never reused, and a successor started at once. The agent's event
 * loop only copies the request and the answer.
 */
export class AnalysisWorkers {
  private readonly idle: Worker[] = [];
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly file: string) {}

  /**
   * One pod's analysis, answered by `deadlineMs` (a late worker is the pod's `deadline`). The
   * analysis stops itself before then; a worker that still answers within LATE_GRACE_MS is kept
   * (a starved node must not pay a cold start per pod), one that does not is terminated. Never rejects.
   */
  analyse(request: AnalysisRequest, deadlineMs: number): Promise<WorkerOutcome> {
    const worker = this.idle.pop() ?? this.start();
    return new Promise((resolve) => {
      let done = false;
      const onMessage = (answer: AnalysisAnswer) => finish({ kind: 'answered', answer }, true);
      const onError = (error: Error & { code?: string }) => finish(failureOf(error), false);
      const onExit = (code: number) =>
        finish({ kind: 'failed', message: `the analysis worker exited ${code} without an answer` }, false);
      // The first outcome is the pod's (a Promise settles once); the worker is dealt with once.
      const finish = (outcome: WorkerOutcome, reuse: boolean) => {
        resolve(outcome);
        if (done) return;
        done = true;
        clearTimeout(late);
        clearTimeout(stop);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (reuse) this.park(worker);
        else this.replace(worker);
      };
      const ms = Math.max(1, Math.ceil(deadlineMs));
      const late = setTimeout(() => resolve({ kind: 'deadline', ms: Math.round(deadlineMs) }), ms);
      const stop = setTimeout(
        () => finish({ kind: 'deadline', ms: Math.round(deadlineMs) }, false),
        ms + LATE_GRACE_MS,
      );
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage(request);
    });
  }

  /** Ends every idle worker (a busy one ends with its pod). */
  close(): void {
    clearTimeout(this.idleTimer);
    for (const worker of this.idle.splice(0)) void worker.terminate();
  }

  private start(): Worker {
    const worker = new Worker(this.file, { resourceLimits: ANALYSIS_WORKER_LIMITS });
    // Never what keeps the agent's process alive.
    worker.unref();
    return worker;
  }

  /** Ends a worker that cannot be reused and starts its successor now, off the next pod's clock. */
  private replace(worker: Worker): void {
    void worker.terminate();
    this.park(this.start());
  }

  private park(worker: Worker): void {
    this.idle.push(worker);
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(), IDLE_MS);
    this.idleTimer.unref();
  }
}

function failureOf(error: Error & { code?: string }): WorkerOutcome {
  return error.code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? {
        kind: 'too-large',
        message: `the analysis passed its ${ANALYSIS_WORKER_LIMITS.maxOldGenerationSizeMb} MiB heap cap and was stopped`,
      }
    : { kind: 'failed', message: error.message };
}
