import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseIp } from '../../src/addr/ip.js';
import type { AttemptOutcome } from '../../src/probe/attempt.js';
import { systemClock } from '../../src/probe/clock.js';
import { newHandshake } from '../../src/probe/handshake.js';
import type { StrangerArrival } from '../../src/probe/listener.js';
import {
  probeUntilDecided,
  type LaunchAttempt,
  type ProbeResult,
  type ProbeTiming,
} from '../../src/probe/probe-loop.js';
import type { ProbeTarget } from '../../src/probe/probe-plan.js';
import { isProof } from '../../src/probe/proof.js';

// The probe loop under vitest's fake timers: the clock is injected, so time is the test's.
const TARGET: ProbeTarget = {
  family: 'ipv4',
  path: 'outbound',
  destination: parseIp('192.0.2.1')!,
  port: 20001,
  expectedPort: 4140,
  via: 'eth0',
};
const NEVER = new Promise<StrangerArrival>(() => undefined);

function timing(timeoutMs = 10_000): ProbeTiming {
  return { deadline: performance.now() + timeoutMs, settleMs: 2000, attemptTimeoutMs: 3000, launchIntervalMs: 1000 };
}

function intercepted(spoofSource = false): AttemptOutcome {
  const handshake = newHandshake();
  const source = { address: '10.0.0.2', port: 41000 };
  const remote = spoofSource ? { address: '10.0.0.1', port: 5000 } : source;
  return {
    kind: 'intercepted',
    arrival: { listenerPort: 4140, localAddress: '127.0.0.1', remote, clientNonce: handshake.clientNonce },
    source,
    handshake,
    reply: handshake.serverNonce,
  };
}

/** An attempt that answers `outcome` after `ms` of fake time, or is aborted with the loop. */
function answering(pick: (attempt: number, now: number) => { outcome: AttemptOutcome; afterMs: number }): {
  launch: LaunchAttempt;
  launches: number[];
} {
  const launches: number[] = [];
  const started = performance.now();
  const launch: LaunchAttempt = (_target, lifetimeMs, signal) => {
    launches.push(performance.now() - started);
    const { outcome, afterMs } = pick(launches.length, performance.now() - started);
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => resolve(afterMs <= lifetimeMs ? outcome : { kind: 'no-answer', stage: 'connect' }),
        Math.min(afterMs, lifetimeMs),
      );
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve({ kind: 'aborted' });
        },
        { once: true },
      );
    });
  };
  return { launch, launches };
}

async function run(
  launch: LaunchAttempt,
  options: { timeoutMs?: number; stranger?: Promise<StrangerArrival>; signal?: AbortSignal } = {},
): Promise<ProbeResult> {
  const pending = probeUntilDecided(TARGET, timing(options.timeoutMs), {
    launch,
    clock: systemClock,
    stranger: options.stranger ?? NEVER,
    signal: options.signal ?? new AbortController().signal,
    hooks: {},
  });
  await vi.runAllTimersAsync();
  return pending;
}

beforeEach(() => {
  // The probe's clock is monotonic (performance.now()): fake it with the timers.
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'Date', 'performance'],
  });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('probeUntilDecided with an injected clock', () => {
  it('an intercepted first attempt passes at once, with a certified proof', async () => {
    const { launch, launches } = answering(() => ({ outcome: intercepted(), afterMs: 5 }));
    const result = await run(launch);
    expect(result).toMatchObject({ status: 'passed', attempts: 1, launched: 1, interceptedAttempt: 1, elapsedMs: 5 });
    expect(isProof(result.proof)).toBe(true);
    expect(launches).toEqual([0]);
  });

  it('an arrival from another socket is not a pass: it counts as a different peer', async () => {
    const { launch } = answering(() => ({ outcome: intercepted(true), afterMs: 5 }));
    const result = await run(launch, { timeoutMs: 3000 });
    expect(result.status).toBe('failed');
    expect(result.proof).toBeUndefined();
    expect(result.lastConclusive).toMatchObject({
      kind: 'wrong-peer',
      detail: 'the arrival did not come from the probe socket',
    });
  });

  it('silence: overlapping attempts, one a second, at most four in flight, failing at the deadline', async () => {
    const { launch, launches } = answering(() => ({ outcome: { kind: 'no-answer', stage: 'reply' }, afterMs: 60_000 }));
    const result = await run(launch, { timeoutMs: 5000 });
    expect(result).toMatchObject({ status: 'failed', endedEarly: false, elapsedMs: 5000 });
    expect(launches).toEqual([0, 1000, 2000, 3000, 4000]);
  });

  it('a refusal is conclusive: retried with backoff, given up after the settle window', async () => {
    const { launch, launches } = answering(() => ({ outcome: { kind: 'refused' }, afterMs: 1 }));
    const result = await run(launch);
    expect(result).toMatchObject({ status: 'failed', endedEarly: true });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(2000);
    expect(result.elapsedMs).toBeLessThan(3000);
    // 50, 100, 200, 400, 400 ... ms apart: never hammering, never waiting a whole interval.
    const gaps = launches.slice(1).map((at, index) => at - (launches[index] ?? 0));
    expect(gaps.slice(0, 4)).toEqual([51, 101, 201, 401]);
  });

  it('rules that land late: refused for 1.2 s, then intercepted', async () => {
    const { launch } = answering((_attempt, now) => ({
      outcome: now < 1200 ? { kind: 'refused' } : intercepted(),
      afterMs: 1,
    }));
    const result = await run(launch);
    expect(result.status).toBe('passed');
    expect(result.interceptedAttempt).toBeGreaterThan(1);
    expect(result.outcomes).toMatchObject({ refused: expect.any(Number), intercepted: 1 });
  });

  it('a stranger at the listener fails the probe at once, even while attempts are unanswered', async () => {
    const { launch } = answering(() => ({ outcome: { kind: 'no-answer', stage: 'reply' }, afterMs: 60_000 }));
    const stranger: StrangerArrival = {
      listenerPort: 4140,
      remote: { address: '10.0.0.1', port: 5000 },
      relayed: false,
      sentence: 'a connection from 10.0.0.1:5000 that is not our probe arrived at the listener port 4140',
    };
    const result = await run(launch, { stranger: new Promise((resolve) => setTimeout(() => resolve(stranger), 1500)) });
    expect(result).toMatchObject({ status: 'failed', stranger, endedEarly: true, elapsedMs: 1500 });
  });

  it('a signal aborts the probe', async () => {
    const { launch } = answering(() => ({ outcome: { kind: 'no-answer', stage: 'reply' }, afterMs: 60_000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort('SIGTERM'), 700);
    const result = await run(launch, { signal: controller.signal });
    expect(result.status).toBe('aborted');
    expect(result.elapsedMs).toBe(700);
  });
});
