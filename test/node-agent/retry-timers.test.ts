import { describe, expect, it } from 'vitest';
import { RetryTimers } from '../../src/node-agent/retry-timers.js';
import { ManualClock } from './agent-fakes.js';

function timersWith() {
  const clock = new ManualClock();
  const fired: string[] = [];
  const timers = new RetryTimers(clock);
  const later = (key: string, ms: number, label: string, attempts?: number) =>
    timers.later(key, ms, () => fired.push(label), attempts);
  return { clock, fired, timers, later };
}

describe('RetryTimers', () => {
  it("a new retry replaces the key's pending one; other keys keep theirs", async () => {
    const { clock, fired, later } = timersWith();
    later('a', 100, 'a1');
    later('b', 100, 'b1');
    later('a', 200, 'a2');
    await clock.advance(1000);
    expect(fired).toEqual(['b1', 'a2']);
  });

  it('a negative delay fires at once', async () => {
    const { clock, fired, later } = timersWith();
    later('a', -50, 'a1');
    await clock.advance(0);
    expect(fired).toEqual(['a1']);
  });

  it('attempts are kept across retries until a success, which leaves the pending retry in place', async () => {
    const { clock, fired, timers, later } = timersWith();
    later('a', 100, 'a1', 2);
    expect(timers.attempts('a')).toBe(2);
    later('a', 100, 'a2');
    expect(timers.attempts('a')).toBe(2);
    timers.succeeded('a');
    expect(timers.attempts('a')).toBe(0);
    await clock.advance(100);
    expect(fired).toEqual(['a2']);
  });

  it('forget and cancelAll cancel what is pending', async () => {
    const { clock, fired, timers, later } = timersWith();
    later('a', 100, 'a1', 3);
    later('b', 100, 'b1');
    timers.forget('a');
    expect(timers.attempts('a')).toBe(0);
    later('c', 100, 'c1');
    timers.cancelAll();
    await clock.advance(1000);
    expect(fired).toEqual([]);
  });
});
