import type { ApiResult } from '../kube/pods-api.js';
import type { PodWatchSink, WatchEnd } from '../kube/watch-pods.js';
import type { AgentClock } from './agent-settings.js';
import { retryDelayMs, type RetryPolicy } from './retry-delay.js';

export interface InformerPorts {
  list(): Promise<ApiResult<{ items: unknown[]; resourceVersion: string }>>;
  watch(resourceVersion: string, signal: AbortSignal): Promise<WatchEnd>;
}

/** A watch shorter than this that ended by itself counts as a failure: reconnecting at once would spin. */
const HEALTHY_WATCH_MS = 1000;

/**
 * List, then watch from the list's resourceVersion; resume from the last resourceVersion seen
 * (bookmarks included) when a watch ends, relist on 410 Gone. Every change between a drop and the
 * resume is replayed by the server, and a relist replaces the whole cache, so nothing is lost.
 */
export async function runPodInformer(
  ports: InformerPorts,
  sink: PodWatchSink,
  clock: AgentClock,
  retry: RetryPolicy,
  random: () => number,
  signal: AbortSignal,
  onSynced: () => void,
): Promise<void> {
  let resourceVersion: string | undefined;
  let failures = 0;
  const pause = async (retryAfterSeconds?: number): Promise<void> => {
    await clock.sleep(retryDelayMs(failures++, retryAfterSeconds, retry, random));
  };
  while (!signal.aborted) {
    if (resourceVersion === undefined) {
      const listed = await ports.list();
      if (signal.aborted) return;
      if (!listed.ok) {
        sink.apiError(listed.error);
        await pause(listed.error.retryAfterSeconds);
        continue;
      }
      sink.relisted(listed.value.items);
      resourceVersion = listed.value.resourceVersion;
      onSynced();
    }
    const started = clock.now();
    const end = await ports.watch(resourceVersion, signal);
    if (signal.aborted) return;
    resourceVersion = end.kind === 'expired' ? undefined : end.resourceVersion;
    if (end.kind === 'failed') {
      sink.apiError(end.error);
      sink.restarted('error');
      await pause(end.error.retryAfterSeconds);
      continue;
    }
    sink.restarted(end.kind === 'expired' ? 'expired' : 'dropped');
    // A watch that ends (or expires) at once, again and again, must not become a list+watch storm.
    if (clock.now() - started < HEALTHY_WATCH_MS) await pause();
    else failures = 0;
  }
}
