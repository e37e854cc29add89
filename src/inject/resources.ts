/**
 * The init container's resources, from measurement rather than habit (README, Benchmarks:
 * `npm run bench`, 2026-11-22): a passing validate peaks at 52.7 MiB RSS (start-up snapshot,
 * uid 65534, no capabilities); a failing one that posts an Event adds about 5 MiB
 * (docs/kube-client.md). The request is that peak plus a 20% margin, rounded up to 64Mi; the
 * limit is 2x the request, room for the rules check of a 100k-rule table.
 */
export const MEASURED_PEAK_RSS_MIB = 52.7;
const MEMORY_MARGIN = 0.2;

export const VALIDATOR_RESOURCES = {
  requests: { cpu: '100m', memory: '64Mi' },
  limits: { memory: '128Mi' },
} as const;

/** Why there is no CPU limit; printed as a comment above `resources` in the manifest. */
export const NO_CPU_LIMIT_COMMENT = [
  ` requests: measured peak RSS ${MEASURED_PEAK_RSS_MIB} MiB + ${MEMORY_MARGIN * 100}% margin, rounded up; limit 2x the request.`,
  ' No CPU limit on purpose: a CPU limit turns start-up CPU into latency (CFS throttling of the',
  ' start-up burst delays every pod start); the request alone gives the scheduler its share.',
].join('\n');
