import { describe, expect, it } from 'vitest';
import type { ApiResult, CreateOutcome } from '../../src/kube/pods-api.js';
import type { AgentEvent } from '../../src/node-agent/agent-events.js';
import { blockedOf } from '../../src/node-agent/blocked.js';
import { EventPoster } from '../../src/node-agent/event-poster.js';
import { podViewOf } from '../../src/node-agent/pod-view.js';
import { crashLoopPod } from '../harness/kube-api/pods.js';
import { ManualClock } from './agent-fakes.js';

/** A poster whose writer answers each createEvent from `answers` in turn (undefined: refused). */
function posterWith(answers: (CreateOutcome | undefined)[]) {
  const clock = new ManualClock();
  const posted: AgentEvent[] = [];
  const actions: string[] = [];
  const logged: string[] = [];
  const poster = new EventPoster('node-a', 'linkerd-network-validator', {
    clock,
    writer: {
      write: async <T>(_operation: string, call: () => Promise<ApiResult<T>>) => {
        await call();
        return answers.shift() as T | undefined;
      },
    },
    api: {
      createEvent: async (event) => {
        posted.push(event);
        return { ok: true, value: 'created' };
      },
    },
    metrics: { action: (kind, result) => actions.push(`${kind}:${result}`) },
    log: { info: (_fields, message) => logged.push(message), error: (_fields, message) => logged.push(message) },
  });
  return { poster, clock, posted, actions, logged };
}

describe('EventPoster', () => {
  it('an Event already there (409) is not posted again', async () => {
    const { poster, posted, actions, logged } = posterWith(['exists']);
    await poster.postNode('InterlockBreakerOpen', 'open', 'Warning');
    expect(posted).toHaveLength(1);
    expect(actions).toEqual(['event:exists']);
    expect(logged).toEqual(['already reported: its Event is there']);
  });

  it('a refused Event is tried 4 times, then given up and logged', async () => {
    const { poster, posted, actions, logged } = posterWith([undefined, undefined, undefined, undefined, 'created']);
    await poster.postNode('InterlockBreakerOpen', 'open', 'Warning');
    expect(posted).toHaveLength(4);
    expect(actions).toEqual(['event:error']);
    expect(logged).toEqual(['Event not posted after 4 attempts']);
  });

  it('a refusal then a success posts once more and counts it posted', async () => {
    const { poster, posted, actions } = posterWith([undefined, 'created']);
    await poster.postNode('InterlockBreakerOpen', 'open', 'Warning');
    expect(posted).toHaveLength(2);
    expect(actions).toEqual(['event:posted']);
  });

  it("node Events in the same millisecond get distinct names, with the node's name as their uid", async () => {
    const { poster, posted } = posterWith(['created', 'created']);
    await poster.postNode('A', 'first', 'Normal');
    await poster.postNode('B', 'second', 'Normal');
    expect(posted.map((event) => event.involvedObject.uid)).toEqual(['node-a', 'node-a']);
    expect(new Set(posted.map((event) => event.metadata.name)).size).toBe(2);
  });

  it("a pod Event's name comes from the pod and the key, so a restarted agent posts the same name", async () => {
    const view = podViewOf(crashLoopPod({ name: 'p' }), 'linkerd-network-validator')!;
    const blocked = blockedOf(view, 95)!;
    const decision = { event: 'InterlockRecreating', note: 'note' };
    const first = posterWith(['created']);
    const second = posterWith(['created']);
    await second.clock.advance(5000);
    await first.poster.postPod(view, blocked, decision, 'k@1');
    await second.poster.postPod(view, blocked, decision, 'k@1');
    expect(first.posted[0]!.metadata.name).toBe(second.posted[0]!.metadata.name);
    expect(first.posted[0]!.reason).toBe('InterlockRecreating');
  });

  it('without a wall clock an Event carries the agent clock as its time', () => {
    const { poster, clock } = posterWith([]);
    expect(poster.wall().getTime()).toBe(clock.now());
  });
});
