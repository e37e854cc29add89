/**
 * The init container's resources, from measurement rather than habit (docs/benchmarks.md:
 * `npm run bench`, 2026-11-22): a passing validate peaks at 52.7 MiB RSS (start-up snapshot,
 * uid 65534, no capabilities); a failing one that posts an Event adds about 5 MiB
 * (docs/kube-client.md). The request is that peak plus a 20% margin, rounded up to 64Mi; the
 * limit is 2x the request, room for the rules check of a 100k-rule table.
 */
const MEASURED_PEAK_RSS_MIB = 52.7;
const MEMORY_MARGIN = 0.2;

export const VALIDATOR_RESOURCES = {
  requests: { cpu: '100m', memory: '64Mi' },
  limits: { memory: '128Mi' },
} as const;

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
};

/** A Kubernetes memory quantity in MiB; undefined when it is not one this check can read. */
function quantityMiB(value: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(k|M|G|Ki|Mi|Gi)?$/.exec(value.trim());
  if (!match) return undefined;
  return (Number(match[1]) * (UNITS[match[2] ?? ''] ?? 1)) / 1024 ** 2;
}

/**
 * The one rule for a memory limit a mesh gave its validator (Linkerd stable-2.14 injects 20Mi):
 * below Interlock's measured peak it is an OOM kill waiting, and must be raised to
 * VALIDATOR_RESOURCES' limit. `inject` keeps the operator's text and warns; the webhook raises it.
 */
export function memoryLimitTooLow(limit: string | undefined): boolean {
  const mib = limit === undefined ? undefined : quantityMiB(limit);
  return mib !== undefined && mib < MEASURED_PEAK_RSS_MIB;
}

/** What is said of such a limit: `keeps` (inject, which warns) or `raised` (the webhook's patch). */
export function memoryLimitNote(container: string, limit: string, done: 'kept' | 'raised'): string {
  const below = `below Interlock's measured peak RSS of ${MEASURED_PEAK_RSS_MIB} MiB`;
  const needed = VALIDATOR_RESOURCES.limits.memory;
  return done === 'kept'
    ? `container ${container} keeps its memory limit ${limit}, ${below}; raise it to at least ${needed} or it may be OOM-killed`
    : `container ${container}'s memory limit ${limit}, ${below}, is raised to ${needed} (it would be OOM-killed)`;
}

/** Why there is no CPU limit; printed as a comment above `resources` in the manifest. */
export const NO_CPU_LIMIT_COMMENT = [
  ` requests: measured peak RSS ${MEASURED_PEAK_RSS_MIB} MiB + ${MEMORY_MARGIN * 100}% margin, rounded up; limit 2x the request.`,
  ' No CPU limit on purpose: a CPU limit turns start-up CPU into latency (CFS throttling of the',
  ' start-up burst delays every pod start); the request alone gives the scheduler its share.',
].join('\n');
