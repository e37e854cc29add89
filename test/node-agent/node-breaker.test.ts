import { describe, expect, it } from 'vitest';
import type { ApiResult } from '../../src/kube/pods-api.js';
import { CLOSED_BREAKER, recordBlocked, tick } from '../../src/node-agent/breaker.js';
import { NodeBreaker } from '../../src/node-agent/node-breaker.js';

const POLICY = { threshold: 0, windowMs: 60_000, minNamespaces: 1 };
const OWNER = { namespace: 'default', owner: 'default/rs-1' };

function breakerWith(taint: boolean, gated = true) {
  const steps: string[] = [];
  const tracked: Promise<void>[] = [];
  const breaker = new NodeBreaker(
    { node: 'node-a', taint, breaker: POLICY },
    {
      writer: {
        write: async <T>(operation: string, call: () => Promise<ApiResult<T>>) => {
          steps.push(`write ${operation}`);
          const answer = await call();
          return answer.ok ? answer.value : undefined;
        },
      },
      api: {
        setTaint: async (present) => {
          steps.push(`taint ${present}`);
          return { ok: true, value: 'changed' };
        },
      },
      metrics: { breakerOpen: (open) => steps.push(`metric ${open}`) },
      log: { info: (_fields, message) => steps.push(message), error: (_fields, message) => steps.push(message) },
      postNodeEvent: async (text) => {
        steps.push(`event ${text.reason}`);
      },
      ...(gated ? { gate: (open: boolean, why: string) => steps.push(`gate ${open} ${why}`) } : {}),
      track: (work) => {
        tracked.push(work);
        return work;
      },
      rescan: () => steps.push('rescan'),
    },
  );
  const settle = () => Promise.all(tracked.splice(0));
  return { breaker, steps, settle };
}

describe('NodeBreaker', () => {
  it('opening: metric, log, gate, the Event, and then the taint', async () => {
    const { breaker, steps, settle } = breakerWith(true);
    breaker.step(recordBlocked(CLOSED_BREAKER, POLICY, OWNER, 1000), '');
    await settle();
    expect(breaker.open).toBe(true);
    const why = 'pods of more than 0 owners in any namespace blocked within 60 s';
    expect(steps).toEqual([
      'metric true',
      `circuit breaker open: ${why}`,
      `gate true ${why}`,
      'event InterlockBreakerOpen',
      'write taint',
      'taint true',
    ]);
  });

  it('closing: the taint comes off before the Event, then every blocked pod is offered again', async () => {
    const { breaker, steps, settle } = breakerWith(true);
    breaker.step(recordBlocked(CLOSED_BREAKER, POLICY, OWNER, 1000), 'CNI audit: x');
    await settle();
    steps.length = 0;
    breaker.step(tick(breaker.current, POLICY, 1000 + POLICY.windowMs), '');
    await settle();
    expect(breaker.open).toBe(false);
    expect(steps).toEqual([
      'metric false',
      'circuit breaker closed',
      'gate false ',
      'write untaint',
      'taint false',
      'event InterlockBreakerClosed',
      'rescan',
    ]);
  });

  it('without taint nothing is tainted; without a gate none is told', async () => {
    const { breaker, steps, settle } = breakerWith(false, false);
    breaker.step(recordBlocked(CLOSED_BREAKER, POLICY, OWNER, 1000), 'CNI audit: x');
    await settle();
    expect(steps).toEqual(['metric true', 'circuit breaker open: CNI audit: x', 'event InterlockBreakerOpen']);
  });

  it('a step without a transition only keeps the state', async () => {
    const { breaker, steps, settle } = breakerWith(true);
    const next = tick(CLOSED_BREAKER, POLICY, 1000);
    breaker.step(next, '');
    await settle();
    expect(breaker.current).toBe(next.state);
    expect(steps).toEqual([]);
  });
});
