import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { meshIdentities } from '../../mesh/meshes.js';
import type { CaptureMode } from './meshed-pod.js';
import type { UnknownCause } from './pod-capture.js';

/** What the re-check reports on /metrics, as a port. */
export interface RecheckMetrics {
  sweep(seconds: number, counts: { captured: number; lost: number; unknown: number }): void;
  unknown(cause: UnknownCause, count: number): void;
  lostPods(byMode: ReadonlyMap<CaptureMode, number>): void;
  /** Running pods the roster could not keep (past its cap), as of this sweep. */
  rosterOverflow(count: number): void;
}

/** Every mode the re-check reports: the meshes whose CNI plugin it reads (sidecar meshes and ambient). */
const MODES: readonly CaptureMode[] = meshIdentities()
  .filter((identity) => identity.podMetadata !== undefined)
  .map((identity) => identity.name);

export function promRecheckMetrics(registry: Registry): RecheckMetrics {
  const registers = [registry];
  const sweeps = new Counter({
    name: 'interlock_node_recheck_sweeps_total',
    help: 'Re-check sweeps finished.',
    registers,
  });
  const pods = new Counter({
    name: 'interlock_node_recheck_pods_total',
    help: 'Pods checked by the re-check, by answer (captured, lost, unknown); a lost answer is reported only once two sweeps agree.',
    labelNames: ['result'],
    registers,
  });
  const unknowns = new Counter({
    name: 'interlock_node_recheck_unknown_total',
    help: 'Pods the re-check could not judge, by cause (no-sandbox, runtime-unreachable, rules-unreadable, ...): never reported lost.',
    labelNames: ['cause'],
    registers,
  });
  const seconds = new Histogram({
    name: 'interlock_node_recheck_sweep_seconds',
    help: 'Wall time of one re-check sweep.',
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const lost = new Gauge({
    name: 'interlock_node_capture_lost_pods',
    help: 'Running pods of this node whose capture two consecutive sweeps found lost, by mesh.',
    labelNames: ['mesh'],
    registers,
  });
  for (const mode of MODES) lost.set({ mesh: mode }, 0);
  const overflow = new Gauge({
    name: 'interlock_node_recheck_roster_overflow_pods',
    help: 'Running meshed pods of this node the re-check could not keep (past its 256-pod roster), as of the last sweep: never checked.',
    registers,
  });
  return {
    rosterOverflow: (count) => overflow.set(count),
    sweep: (value, counts) => {
      sweeps.inc();
      seconds.observe(value);
      for (const [result, count] of Object.entries(counts)) pods.inc({ result }, count);
    },
    unknown: (cause, count) => unknowns.inc({ cause }, count),
    lostPods: (byMode) => {
      for (const mode of MODES) lost.set({ mesh: mode }, byMode.get(mode) ?? 0);
    },
  };
}
