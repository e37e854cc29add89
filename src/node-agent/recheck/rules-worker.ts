import { parentPort } from 'node:worker_threads';
import { decideVariants } from '../../rules-check/decide.js';
import { answerOf, type AnalysisRequest } from './analysis-request.js';

/**
 * The re-check's rules analysis, in a worker thread (src/node-agent/recheck/worker-analysis.ts
 * starts it with a heap cap, sends it one pod at a time and terminates it at a pod's deadline):
 * the agent's event loop never parses or verifies a tenant's rules. The dumps are parsed once for
 * every configuration the pod may have; the first that passes ends the work.
 */
parentPort?.on('message', (request: AnalysisRequest) => {
  // The deadline arrives as time left: a worker's performance.now() has its own origin.
  const analysisDeadline = performance.now() + request.remainingMs;
  const inspections = decideVariants(
    request.specs,
    request.outcomes,
    { families: request.families, mode: 'required', analysisDeadline },
    (inspection) => inspection.status === 'passed',
  );
  parentPort?.postMessage(answerOf(inspections));
});
