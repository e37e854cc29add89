import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { crashLoopPod, nodeObject } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import { gcStormFlags, startBusyLoops, steppedClock, untilOrExit } from '../harness/starvation.js';
import { startAgent, waitFor, type AgentProcess } from './agent-process.js';

// The agent's deadlines: every API call ends at its timeout (10 s), and SIGTERM ends the agent
// within its stop deadline (in-flight work is cut off after 4 s), whatever the wall clock or the
// load does. Each test holds a DELETE open on the API stand-in (accepted, never answered).
const NEVER_MS = 120_000;
let api: KubeApi;
let agent: AgentProcess | undefined;
const cleanups: (() => void)[] = [];

beforeEach(async () => {
  api = await startKubeApi({ bookmarkMs: 200 });
  api.store.put('nodes', nodeObject('node-a'));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  agent?.kill();
  agent = undefined;
  await api.close();
});

const logged = (pattern: RegExp) => () => agent!.logs.some((line) => pattern.test(String(line.msg)));

/** The agent, ready, with one DELETE on its way that the API server accepts and never answers. */
async function agentWithAnUnansweredDelete(
  env: Record<string, string> = {},
  nodeFlags: readonly string[] = [],
): Promise<AgentProcess> {
  agent = await startAgent(api, [], env, nodeFlags);
  await waitFor('readyz', async () => (await fetch(`${agent!.base}/readyz`)).status === 200, 30_000);
  api.faults.add({ method: 'DELETE', fault: { kind: 'delay', ms: NEVER_MS }, times: 1 });
  api.store.put('pods', crashLoopPod({ name: 'web-1' }));
  await untilOrExit(agent.child, 'the DELETE to arrive', () =>
    api.arrivals.includes('DELETE /api/v1/namespaces/default/pods/web-1'),
  );
  return agent;
}

/** SIGTERM; an agent still running 60 s later is killed (code null), so the test fails instead of hanging. */
async function bounded(running: AgentProcess): Promise<{ code: number | null }> {
  const guard = setTimeout(() => running.kill(), 60_000);
  try {
    return await running.terminate();
  } finally {
    clearTimeout(guard);
  }
}

describe('interlock node keeps its deadlines on the monotonic clock', () => {
  it('an API call the server never answers ends at its timeout, though the wall clock stepped back an hour', async () => {
    const clock = steppedClock();
    cleanups.push(clock.remove);
    const running = await agentWithAnUnansweredDelete(clock.env);
    clock.step('-3600');
    await untilOrExit(running.child, 'the timed-out DELETE', logged(/no complete answer within 10000 ms/));
    expect(running.child.exitCode).toBeNull();
    // And the agent goes on: the pod's delete is retried once the pause is over.
    await untilOrExit(running.child, 'the retried DELETE', () =>
      api.requests.some((request) => request.method === 'DELETE' && request.status === 200),
    );
  }, 90_000);

  it('SIGTERM during an unanswered call, the wall clock stepped back an hour: exit 0 at the stop deadline', async () => {
    const clock = steppedClock();
    cleanups.push(clock.remove);
    const running = await agentWithAnUnansweredDelete(clock.env);
    const stopping = bounded(running);
    await untilOrExit(running.child, 'the stop', logged(/^stopping: /));
    // Mid-wait: the stop deadline is already armed.
    clock.step('-3600');
    const { code } = await stopping;
    expect(code).toBe(0);
    expect(logged(/^stopped: in-flight actions cut off at the deadline$/)()).toBe(true);
  }, 90_000);
});

describe('interlock node under forced garbage collection', () => {
  it('a collection every 10 ms loses neither the stop signal nor the stop deadline', async () => {
    const storm = gcStormFlags();
    cleanups.push(storm.remove);
    const running = await agentWithAnUnansweredDelete({}, storm.flags);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { code } = await bounded(running);
    expect(code).toBe(0);
    expect(logged(/^stopped: in-flight actions cut off at the deadline$/)()).toBe(true);
  }, 90_000);
});

describe('interlock node under starvation (busy loops in their own sessions)', () => {
  it('SIGTERM during an unanswered call still ends the agent with exit 0 at its stop deadline', async () => {
    const running = await agentWithAnUnansweredDelete();
    const loops = startBusyLoops();
    cleanups.push(loops.stop);
    const { code } = await bounded(running);
    loops.stop();
    expect(code).toBe(0);
    expect(logged(/^stopped: in-flight actions cut off at the deadline$/)()).toBe(true);
  }, 120_000);
});
