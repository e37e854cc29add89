import type { CaptureMode } from './meshed-pod.js';
import type { PodCapture } from './pod-capture.js';

/** What the agent remembers of a pod between sweeps: how many sweeps in a row found it lost, and whether it was reported. */
export interface LossMemory {
  readonly streak: number;
  readonly reported: boolean;
  readonly mode: CaptureMode;
}

export type Memory = ReadonlyMap<string, LossMemory>;

export interface SweepResult {
  readonly uid: string;
  readonly mode: CaptureMode;
  readonly check: PodCapture;
}

export interface Agreement {
  readonly memory: Memory;
  /** Pods two consecutive sweeps found lost, reported now (once per loss). */
  readonly confirmed: readonly SweepResult[];
  /** Pods reported lost before that this sweep found captured again. */
  readonly recovered: readonly string[];
  /** Pods reported lost and not found captured since: the gauge, by mode. */
  readonly lostByMode: ReadonlyMap<CaptureMode, number>;
}

/** Sweeps that must agree before a pod is reported lost. */
const AGREEING_SWEEPS = 2;

/**
 * The memory after one sweep. Pure. A pod is confirmed lost when this sweep and the one before it
 * both found it lost; an unknown in between starts the count over (two sweeps that agree must be
 * consecutive), and never clears a report already made: only a captured answer does. Pods absent
 * from the sweep (gone from the node) are forgotten, so the memory never outgrows the node.
 */
export function agree(previous: Memory, results: readonly SweepResult[]): Agreement {
  const memory = new Map<string, LossMemory>();
  const confirmed: SweepResult[] = [];
  const recovered: string[] = [];
  for (const result of results) {
    const before = previous.get(result.uid);
    const kind = result.check.kind;
    if (kind === 'captured') {
      if (before?.reported) recovered.push(result.uid);
      continue;
    }
    if (kind === 'unknown') {
      if (before?.reported) memory.set(result.uid, { ...before, streak: 0 });
      continue;
    }
    const streak = (before?.streak ?? 0) + 1;
    const reported = before?.reported === true || streak >= AGREEING_SWEEPS;
    if (reported && !before?.reported) confirmed.push(result);
    memory.set(result.uid, { streak, reported, mode: result.mode });
  }
  const lostByMode = new Map<CaptureMode, number>();
  for (const entry of memory.values())
    if (entry.reported) lostByMode.set(entry.mode, (lostByMode.get(entry.mode) ?? 0) + 1);
  return { memory, confirmed, recovered, lostByMode };
}
