import type { AmbientPodAnnotation } from '../../mesh/istio-ambient.js';
import { agree, type Memory, type SweepResult } from './agreement.js';
import { recheckPod, type RecheckPodPorts } from './recheck-pod.js';
import { meshIdentity } from '../../mesh/meshes.js';
import { expectationOf } from './expectations.js';
import { AMBIENT, captureModeOf, type CaptureMode, type NamespaceMeta, type RecheckPod } from './meshed-pod.js';
import { unknown, type PodCapture, type UnknownCause } from './pod-capture.js';

export interface SweepPorts extends RecheckPodPorts {
  /** The namespace's labels and annotations, or undefined when they cannot be read now. */
  readonly namespace: (name: string) => Promise<NamespaceMeta | undefined>;
}

export interface SweepSettings {
  /** Pods checked at once. */
  readonly concurrency: number;
  /** Each pod's deadline, runtime calls, reading and analysis included. */
  readonly podDeadlineMs: number;
  /** The ambient pod annotations the node's istio-cni reads (its version's); unset, the newest's. */
  readonly ambientReads?: ReadonlySet<AmbientPodAnnotation>;
  /** What one sweep may take (the re-check's interval): each pod gets at most its share of it. */
  readonly sweepBudgetMs?: number;
}

/** The least a pod's check is given, whatever its share: the runtime's calls and three children. */
const MIN_POD_SHARE_MS = 1000;

/**
 * One pod's deadline in a sweep of `pods`: its share of the sweep's budget (`concurrency` checks at
 * once), never more than the pod's own deadline nor less than MIN_POD_SHARE_MS. A dozen hostile
 * pods each stopped at their share leave the sweep within its budget for the others.
 */
export function podShareMs(settings: SweepSettings, pods: number): number {
  if (settings.sweepBudgetMs === undefined || pods === 0) return settings.podDeadlineMs;
  const share = Math.floor((settings.sweepBudgetMs * settings.concurrency) / pods);
  return Math.min(settings.podDeadlineMs, Math.max(MIN_POD_SHARE_MS, share));
}

/** What one sweep found, for the reporter: the agreement and the count of each answer. */
export interface SweepOutcome {
  readonly results: readonly (SweepResult & { readonly pod: RecheckPod })[];
  readonly confirmed: readonly (SweepResult & { readonly pod: RecheckPod })[];
  readonly recovered: readonly RecheckPod[];
  readonly lostByMode: ReadonlyMap<CaptureMode, number>;
  readonly unknownByCause: ReadonlyMap<UnknownCause, number>;
  readonly memory: Memory;
}

type Target = { pod: RecheckPod; mode: CaptureMode; namespace: NamespaceMeta | undefined };

/** The running meshed pods among `pods`, with their namespace read once per sweep. */
async function targetsOf(pods: readonly RecheckPod[], ports: SweepPorts): Promise<Target[]> {
  const names = [...new Set(pods.filter((pod) => pod.running).map((pod) => pod.namespace))];
  const metas = new Map(await Promise.all(names.map(async (name) => [name, await ports.namespace(name)] as const)));
  const targets: Target[] = [];
  for (const pod of pods) {
    if (!pod.running) continue;
    const namespace = metas.get(pod.namespace);
    const mode = captureModeOf(pod, namespace);
    if (mode) targets.push({ pod, mode, namespace });
  }
  return targets;
}

async function withDeadline(work: Promise<PodCapture>, ms: number): Promise<PodCapture> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<PodCapture>((resolve) => {
    timer = setTimeout(() => resolve(unknown('deadline', `the check did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function checkTarget(
  target: Target,
  ports: SweepPorts,
  deadlineMs: number,
  reads: SweepSettings['ambientReads'],
): Promise<PodCapture> {
  const { pod, mode, namespace } = target;
  // Linkerd's exclusions fall back to the namespace's annotations: unread, the expectation is not known.
  if (mode !== AMBIENT && meshIdentity(mode).namespaceAnnotationFallback && !namespace)
    return unknown('no-expectation', `namespace ${pod.namespace} could not be read`);
  const expectation = expectationOf(mode, pod, namespace, reads);
  const work = recheckPod(pod, expectation, ports, deadlineMs).catch((error: unknown) =>
    unknown('rules-undecided', `the check failed: ${error instanceof Error ? error.message : String(error)}`),
  );
  // A grace past the pod's own deadline: the readers and the analysis stop on theirs first.
  return withDeadline(work, deadlineMs + 500);
}

/** At most `limit` at once, in order; every item gets its answer. */
async function pooled<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** One sweep over the node's pods: check each running meshed pod, then agree with the sweep before. */
export async function sweep(
  pods: readonly RecheckPod[],
  previous: Memory,
  ports: SweepPorts,
  settings: SweepSettings,
): Promise<SweepOutcome> {
  const targets = await targetsOf(pods, ports);
  const share = podShareMs(settings, targets.length);
  const checks = await pooled(targets, settings.concurrency, (target) =>
    checkTarget(target, ports, share, settings.ambientReads),
  );
  const results = targets.map((target, index) => ({
    uid: target.pod.uid,
    mode: target.mode,
    check: checks[index]!,
    pod: target.pod,
  }));
  const agreement = agree(previous, results);
  const byUid = new Map(results.map((result) => [result.uid, result]));
  const unknownByCause = new Map<UnknownCause, number>();
  for (const { check } of results)
    if (check.kind === 'unknown') unknownByCause.set(check.cause, (unknownByCause.get(check.cause) ?? 0) + 1);
  return {
    results,
    confirmed: agreement.confirmed.map((result) => byUid.get(result.uid)!),
    recovered: agreement.recovered.map((uid) => byUid.get(uid)!.pod),
    lostByMode: agreement.lostByMode,
    unknownByCause,
    memory: agreement.memory,
  };
}
