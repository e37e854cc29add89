import { describe, expect, it } from 'vitest';
import type { ApiFailure } from '../../src/kube/pods-api.js';
import { ApiWriter } from '../../src/node-agent/api-writer.js';
import { ManualClock } from './agent-fakes.js';

type Answer = { ok: true; value: string } | { ok: false; error: ApiFailure };
const failure = (status: number, retryAfterSeconds?: number): Answer => ({
  ok: false,
  error: { status, message: `status ${status}`, retryAfterSeconds },
});
const OK: Answer = { ok: true, value: 'done' };

function writerWith(writesPerSecond = 1000, writeBurst = 1000) {
  const clock = new ManualClock();
  const errors: string[] = [];
  const actions: string[] = [];
  const warnings: unknown[] = [];
  const writer = new ApiWriter(
    { retry: { baseMs: 500, maxMs: 30_000 }, writesPerSecond, writeBurst },
    {
      clock,
      random: () => 0.5,
      metrics: {
        apiError: (operation, status) => errors.push(`${operation}:${status}`),
        action: (kind, result) => actions.push(`${kind}:${result}`),
      },
      log: { warn: (fields) => warnings.push(fields) },
    },
  );
  const calls: number[] = [];
  const call = (answer: Answer) => async () => {
    calls.push(clock.now());
    return answer;
  };
  return { writer, clock, errors, actions, warnings, calls, call };
}

describe('ApiWriter', () => {
  it('a refused write pauses every later write for the Retry-After', async () => {
    const { writer, clock, calls, call, errors, warnings } = writerWith();
    const start = clock.now();
    expect(await writer.write('event', call(failure(429, 3)))).toBeUndefined();
    expect(writer.pausedUntil).toBe(start + 3000);
    const second = writer.write('taint', call(OK));
    await clock.advance(2999);
    expect(calls).toEqual([start]);
    await clock.advance(1);
    expect(await second).toBe('done');
    expect(calls).toEqual([start, start + 3000]);
    expect(errors).toEqual(['event:429']);
    expect(warnings).toEqual([{ operation: 'event', status: 429, retryInMs: 3000 }]);
  });

  it('without Retry-After the pause grows exponentially, and a success starts it over', async () => {
    const { writer, clock, call } = writerWith();
    const start = clock.now();
    await writer.write('event', call(failure(500)));
    // attempt 0: 500 ms step, jitter 0.5 of its upper half: 375 ms
    expect(writer.pausedUntil).toBe(start + 375);
    const second = writer.write('event', call(failure(500)));
    await clock.advance(375);
    await second;
    expect(writer.pausedUntil).toBe(start + 375 + 750);
    const third = writer.write('event', call(OK));
    await clock.advance(750);
    await third;
    const fourth = writer.write('event', call(failure(500)));
    await clock.advance(0);
    await fourth;
    expect(writer.pausedUntil).toBe(clock.now() + 375);
  });

  it('a refused delete or label is counted as an action error; other operations are not', async () => {
    const { writer, clock, call, actions } = writerWith();
    for (const operation of ['delete', 'label', 'event', 'taint']) {
      const written = writer.write(operation, call(failure(500, 0)));
      await clock.advance(1000);
      await written;
    }
    expect(actions).toEqual(['delete:error', 'label:error']);
  });

  it('writes share one token bucket: past the burst they wait their turn', async () => {
    const { writer, clock, calls, call } = writerWith(1, 1);
    const start = clock.now();
    const both = Promise.all([writer.write('event', call(OK)), writer.write('event', call(OK))]);
    await clock.advance(999);
    expect(calls).toEqual([start]);
    await clock.advance(1);
    await both;
    expect(calls).toEqual([start, start + 1000]);
  });
});
