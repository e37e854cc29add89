import { describe, expect, it } from 'vitest';
import { InFlight } from '../../src/node-agent/in-flight.js';
import { ManualClock } from './agent-fakes.js';

describe('InFlight', () => {
  it('drains to true once all tracked work settled', async () => {
    const clock = new ManualClock();
    const inFlight = new InFlight();
    let finish: () => void = () => undefined;
    void inFlight.track(new Promise<void>((resolve) => (finish = resolve)));
    const drained = inFlight.drain(clock, 1000);
    finish();
    expect(await drained).toBe(true);
  });

  it('drains to false when work outlives the deadline', async () => {
    const clock = new ManualClock();
    const inFlight = new InFlight();
    void inFlight.track(new Promise<void>(() => undefined));
    const drained = inFlight.drain(clock, 1000);
    await clock.advance(1000);
    expect(await drained).toBe(false);
  });

  it('settled work is no longer waited for', async () => {
    const clock = new ManualClock();
    const inFlight = new InFlight();
    await inFlight.track(Promise.resolve());
    let settled: boolean | undefined;
    void inFlight.drain(clock, 1000).then((value) => (settled = value));
    await clock.advance(0);
    expect(settled).toBe(true);
  });
});
