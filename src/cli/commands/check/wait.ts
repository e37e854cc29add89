import { formatDuration } from '../../../config/duration.js';
import type { InstallCheckResult } from '../../../install-check/install-check-result.js';
import type { Clock } from '../../../probe/clock.js';

/** How long between two runs: long enough not to load the API server, short enough for a rollout. */
const RETRY_MS = 2000;

/**
 * Runs the checks until none fails or `waitMs` has passed on `clock` (monotonic: a wall-clock
 * step neither ends nor stretches the wait), or `stop` aborts; returns the last run. Each retry
 * says on `progress` what still fails.
 */
export async function checkUntilPassed<T extends { readonly results: readonly InstallCheckResult[] }>(
  run: () => Promise<T>,
  waitMs: number,
  clock: Clock,
  progress: (line: string) => void,
  stop?: AbortSignal,
): Promise<T> {
  const deadline = clock.now() + waitMs;
  for (;;) {
    const last = await run();
    const failing = last.results.filter((result) => result.status === 'fail');
    const left = deadline - clock.now();
    if (failing.length === 0 || left <= 0 || stop?.aborted) return last;
    const pause = Math.min(RETRY_MS, left);
    progress(
      `waiting: ${failing.length} failing (${failing[0]?.id ?? ''}: ${failing[0]?.message ?? ''}); again in ${formatDuration(pause)}, ${formatDuration(left)} left`,
    );
    await clock.sleep(pause, stop);
  }
}
