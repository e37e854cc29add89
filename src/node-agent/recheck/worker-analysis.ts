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

/**
 * The re-check's analysis workers: at most one per pod checked at once, each reused pod after pod
 * within a sweep (a worker's start costs about 30 ms of CPU) and ended when idle. A worker that
 * passes the pod's deadline or its heap cap is terminated and never reused. The agent's event loop
 * only copies the request and the answer.
 */
export class AnalysisWorkers {
  private readonly idle: Worker[] = [];
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly file: string) {}

  /** One pod's analysis, stopped at `deadlineMs`. Never rejects. */
  analyse(request: AnalysisRequest, deadlineMs: number): Promise<WorkerOutcome> {
    const worker = this.idle.pop() ?? this.start();
    return new Promise((resolve) => {
      let settled = false;
      const onMessage = (answer: AnalysisAnswer) => settle({ kind: 'answered', answer }, true);
      const onError = (error: Error & { code?: string }) => settle(failureOf(error), false);
      const onExit = (code: number) =>
        settle({ kind: 'failed', message: `the analysis worker exited ${code} without an answer` }, false);
      // Only these three: Node's own listeners on a Worker carry its messages.
      const settle = (outcome: WorkerOutcome, reuse: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (reuse) this.park(worker);
        else void worker.terminate();
        resolve(outcome);
      };
      const timer = setTimeout(
        () => settle({ kind: 'deadline', ms: Math.round(deadlineMs) }, false),
        Math.max(1, Math.ceil(deadlineMs)),
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
