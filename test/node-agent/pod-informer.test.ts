import { describe, expect, it } from 'vitest';
import type { ApiFailure } from '../../src/kube/pods-api.js';
import type { PodWatchSink, WatchEnd } from '../../src/kube/watch-pods.js';
import type { AgentClock } from '../../src/node-agent/agent-settings.js';
import { runPodInformer } from '../../src/node-agent/pod-informer.js';

/** Records every sleep and advances time by it at once: the informer's waits, exactly. */
function recordingClock(stopAfter: number, controller: AbortController): AgentClock & { slept: number[] } {
  let time = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => time,
    sleep: async (ms) => {
      slept.push(ms);
      time += ms;
      if (slept.length >= stopAfter) controller.abort();
    },
    later: () => () => undefined,
  };
}

const sink = (log: string[]): PodWatchSink => ({
  relisted: (pods) => log.push(`relisted ${pods.length}`),
  changed: (type) => log.push(type),
  restarted: (cause) => log.push(`restarted ${cause}`),
  apiError: (failure) => log.push(`error ${failure.status}`),
});
const failure = (status: number, retryAfterSeconds?: number): ApiFailure => ({
  status,
  retryAfterSeconds,
  message: `answered ${status}`,
});

describe('pod informer', () => {
  it('a failing list backs off exponentially, and a 429 waits for Retry-After', async () => {
    const controller = new AbortController();
    const clock = recordingClock(4, controller);
    const log: string[] = [];
    const answers = [failure(500), failure(500), failure(429, 7), failure(500)];
    const ports = {
      list: async () => ({ ok: false as const, error: answers.shift()! }),
      watch: async (): Promise<WatchEnd> => ({ kind: 'expired' }),
    };
    await runPodInformer(
      ports,
      sink(log),
      clock,
      { baseMs: 500, maxMs: 30_000 },
      () => 1,
      controller.signal,
      () => undefined,
    );
    expect(clock.slept).toEqual([500, 1000, 7000, 4000]);
    expect(log).toEqual(['error 500', 'error 500', 'error 429', 'error 500']);
  });

  it('resumes a dropped watch from its last resourceVersion, relists on 410, and does not spin on instant drops', async () => {
    const controller = new AbortController();
    const clock = recordingClock(3, controller);
    const log: string[] = [];
    const watched: string[] = [];
    const ends: WatchEnd[] = [
      { kind: 'ended', resourceVersion: '15' },
      { kind: 'expired' },
      { kind: 'ended', resourceVersion: '30' },
    ];
    let lists = 0;
    const ports = {
      list: async () => ({ ok: true as const, value: { items: [{}], resourceVersion: String(10 * ++lists) } }),
      watch: async (rv: string): Promise<WatchEnd> => {
        watched.push(rv);
        return ends.shift() ?? { kind: 'ended', resourceVersion: rv };
      },
    };
    await runPodInformer(
      ports,
      sink(log),
      clock,
      { baseMs: 500, maxMs: 30_000 },
      () => 1,
      controller.signal,
      () => undefined,
    );
    expect(watched.slice(0, 3)).toEqual(['10', '15', '20']);
    expect(log.slice(0, 5)).toEqual([
      'relisted 1',
      'restarted dropped',
      'restarted expired',
      'relisted 1',
      'restarted dropped',
    ]);
    // Each of those watches ended at once: 0.5 s, 1 s, 2 s apart, never back to back.
    expect(clock.slept).toEqual([500, 1000, 2000]);
  });
});
