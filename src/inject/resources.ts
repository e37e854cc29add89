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
 * below Interlock's measured peak it is raised to VALIDATOR_RESOURCES' limit, by `inject` and by
 * the webhook alike, each saying so with memoryLimitNote. A passing drop-in fits in 20Mi (its
 * memory cgroup peaks near 18 MiB, e2e/cri/mesh-validators.test.ts), but not with room for the
 * failure path.
 */
export function memoryLimitTooLow(limit: string | undefined): boolean {
  const mib = limit === undefined ? undefined : quantityMiB(limit);
  return mib !== undefined && mib < MEASURED_PEAK_RSS_MIB;
}

/** Why such a limit is raised: the one sentence inject, the webhook, the docs and the CHANGELOG give. */
export const MEMORY_LIMIT_RULE = `a validator memory limit below Interlock's measured peak RSS of ${MEASURED_PEAK_RSS_MIB} MiB is raised to ${VALIDATOR_RESOURCES.limits.memory}: a passing validate fits in less, but a failing one that posts its Event or reads the rules may be OOM-killed, and exit 137 is not the failure code the mesh's repair controller acts on`;

/** What inject and the webhook say of a limit they raised. */
export function memoryLimitNote(container: string, limit: string): string {
  return `container ${container}'s memory limit ${limit} is raised to ${VALIDATOR_RESOURCES.limits.memory} (${MEMORY_LIMIT_RULE})`;
}

/** Why there is no CPU limit; printed as a comment above `resources` in the manifest. */
export const NO_CPU_LIMIT_COMMENT = [
  ` requests: measured peak RSS ${MEASURED_PEAK_RSS_MIB} MiB + ${MEMORY_MARGIN * 100}% margin, rounded up; limit 2x the request.`,
  ' No CPU limit on purpose: a CPU limit turns start-up CPU into latency (CFS throttling of the',
  ' start-up burst delays every pod start); the request alone gives the scheduler its share.',
].join('\n');
