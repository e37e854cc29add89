import type { ZtunnelPorts } from './ambient-capture.js';
import { attemptAmbient } from './ambient-attempt.js';
import { pollAmbientCapture, type AmbientResult, type AmbientTiming } from './ambient-loop.js';
import { systemClock, type Clock } from './clock.js';
import type { ProbeTarget } from './probe-plan.js';
import { readPodSocketTables, type ReadSocketTables } from './socket-tables.js';

/**
 * Proves every target concurrently, each polling on its own: no listener of ours is bound
 * (ztunnel owns the ports), so nothing here can be mistaken for the capture but the kernel's rows.
 */
export function proveAmbientCapture(
  targets: readonly ProbeTarget[],
  ports: ZtunnelPorts,
  timing: AmbientTiming,
  signal: AbortSignal,
  readTables: ReadSocketTables = readPodSocketTables,
  clock: Clock = systemClock,
): Promise<AmbientResult[]> {
  const launch = (target: ProbeTarget, timeoutMs: number, stop: AbortSignal) =>
    attemptAmbient(target, ports, timeoutMs, stop, readTables);
  return Promise.all(targets.map((target) => pollAmbientCapture(target, timing, launch, clock, signal)));
}
