import type { InterceptionSpec } from '../config/interception.js';
import type { Logger } from '../output/logger.js';
import type { ZtunnelPorts } from '../probe/ambient-capture.js';
import type { AmbientResult } from '../probe/ambient-loop.js';
import type { ProbeTarget } from '../probe/probe-plan.js';
import { proveAmbientCapture } from '../probe/prove-ambient.js';

export interface AmbientRun {
  readonly kind: 'ambient';
  readonly results: readonly AmbientResult[];
}

/** A capture answers in microseconds; an attempt waits this long for silence to mean something. */
const ATTEMPT_TIMEOUT_MS = 1000;
/** Between attempts: late enrolment is seen within this of the rules and listeners landing. */
const RETRY_INTERVAL_MS = 200;

export function ambientPorts(spec: InterceptionSpec): ZtunnelPorts {
  return { outbound: spec.outboundPort, inbound: spec.inboundPort, tunnel: spec.inboundTunnelPort };
}

/** Istio ambient's probe: no listener of ours, the pod's socket tables as the witness, polled to the deadline. */
export async function proveAmbient(
  spec: InterceptionSpec,
  targets: readonly ProbeTarget[],
  deadline: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<AmbientRun> {
  const timing = { deadline, attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, retryIntervalMs: RETRY_INTERVAL_MS };
  const results = await proveAmbientCapture(targets, ambientPorts(spec), timing, signal);
  for (const result of results)
    logger.info(
      {
        family: result.target.family,
        port: result.target.port,
        status: result.status,
        attempts: result.attempts,
        elapsedMs: Math.round(result.elapsedMs),
        outcomes: result.outcomes,
      },
      result.status === 'passed' ? 'ambient capture seen in the pod socket table' : 'ambient capture not seen',
    );
  return { kind: 'ambient', results };
}
