/**
 * Time as the probe loop sees it: injected, so the loop runs under fake timers in unit tests.
 * Monotonic: a wall-clock step (NTP's first sync on a booting node) moves no deadline.
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or at once when `cancel` aborts, and then holds no timer. */
  sleep(ms: number, cancel?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, cancel) =>
    new Promise((resolve) => {
      if (cancel?.aborted) return resolve();
      const timer = setTimeout(() => {
        cancel?.removeEventListener('abort', wake);
        resolve();
      }, ms);
      const wake = (): void => {
        clearTimeout(timer);
        resolve();
      };
      cancel?.addEventListener('abort', wake, { once: true });
    }),
};
