import { decideVariants } from '../../rules-check/decide.js';
import { answerOf, type AnalysisRequest } from './analysis-request.js';
import type { AnalysisWorkers, WorkerOutcome } from './worker-analysis.js';

/**
 * The most rules text (every dump of one pod) analysed on the agent's event loop. A mesh's rules
 * are 2-30 KB (Linkerd's corpus table with its nft JSON copy, 29 KB); the analysis of 64 KiB of
 * hostile RETURNs took 52-192 ms there (2026-11-28, the 2 shared cores, loaded). Anything larger
 * goes to a worker thread: a tenant's large ruleset never holds the event loop. Below it, a worker
 * costs more than the analysis: on a starved node (24 busy loops on 2 cores) a warm worker's round
 * trip took 2-766 ms against 1-2 ms on the event loop, a cold one 3.7 s, past a pod's deadline.
 */
export const IN_THREAD_MAX_BYTES = 64 * 1024;

/** One pod's analysis: on the event loop when its dumps are small, else in a worker stopped at `deadlineMs`. */
export function analysePod(
  workers: AnalysisWorkers,
  request: AnalysisRequest,
  deadlineMs: number,
): Promise<WorkerOutcome> {
  let bytes = 0;
  for (const outcome of request.outcomes) if (outcome.kind === 'read') bytes += outcome.dump.text.length;
  if (bytes > IN_THREAD_MAX_BYTES) return workers.analyse(request, deadlineMs);
  const inspections = decideVariants(
    request.specs,
    request.outcomes,
    { families: request.families, mode: 'required', analysisDeadline: performance.now() + request.remainingMs },
    (inspection) => inspection.status === 'passed',
  );
  return Promise.resolve({ kind: 'answered', answer: answerOf(inspections) });
}
