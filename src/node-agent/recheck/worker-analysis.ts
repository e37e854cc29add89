import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AnalysisAnswer, AnalysisRequest } from './analysis-request.js';

/**
 * How one analysis worker may grow. A pod's rules are a few kilobytes and parse into well under a
 * MiB; the live readers accept at most 1 MiB of iptables-save and 2 MiB of nft JSON
 * (src/rules/limits.ts). A worker's heap past this is stopped by V8 (ERR_WORKER_OUT_OF_MEMORY) and
 * the pod is unknown, too large, never the agent's OOM: with the sweep's 4 pods at once, the
 * workers take at most 4 x (32 + 4) MiB beside the agent's own heap.
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

/**
 * Runs one pod's analysis in a worker thread of its own, with a heap cap, and terminates it when
 * `deadlineMs` passes: the agent's event loop only copies the request and the answer. Never rejects.
 */
export function analyseInWorker(file: string, request: AnalysisRequest, deadlineMs: number): Promise<WorkerOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const worker = new Worker(file, { resourceLimits: ANALYSIS_WORKER_LIMITS });
    const settle = (outcome: WorkerOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => settle({ kind: 'deadline', ms: Math.round(deadlineMs) }),
      Math.max(1, Math.ceil(deadlineMs)),
    );
    worker.once('message', (answer: AnalysisAnswer) => settle({ kind: 'answered', answer }));
    worker.once('error', (error: Error & { code?: string }) =>
      settle(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? {
              kind: 'too-large',
              message: `the analysis passed its ${ANALYSIS_WORKER_LIMITS.maxOldGenerationSizeMb} MiB heap cap and was stopped`,
            }
          : { kind: 'failed', message: error.message },
      ),
    );
    worker.once('exit', (code) =>
      settle({ kind: 'failed', message: `the analysis worker exited ${code} without an answer` }),
    );
    worker.postMessage(request);
  });
}
