/**
 * How long to wait before retrying a failed API call: the server's Retry-After when it gives one
 * (429, 503), else exponential from `baseMs`, capped, with jitter so that agents on many nodes do
 * not retry in step. `random` is injected so tests are exact.
 */
export interface RetryPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 500, maxMs: 30_000 };

export function retryDelayMs(
  attempt: number,
  retryAfterSeconds: number | undefined,
  policy: RetryPolicy,
  random: () => number,
): number {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    return Math.min(policy.maxMs, Math.max(policy.baseMs, retryAfterSeconds * 1000));
  }
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt));
  // Full jitter in the upper half: never shorter than half the step, never a burst.
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

/** Retry-After as seconds (the API server sends integers; an HTTP date is read too). */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}
