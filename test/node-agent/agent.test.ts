import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Taint } from '../../src/kube/nodes-taint.js';
import type { AgentEvent } from '../../src/node-agent/agent-events.js';
import { crashLoopPod, failedJobPod, healthyPod, nodeObject, type FixturePod } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import type { KubeObject } from '../harness/kube-api/types.js';
import { metric, startAgent, waitFor, type AgentProcess } from './agent-process.js';

let api: KubeApi;
let agent: AgentProcess | undefined;
beforeEach(async () => {
  api = await startKubeApi({ bookmarkMs: 200 });
  api.store.put('nodes', nodeObject('node-a'));
});
afterEach(async () => {
  agent?.kill();
  agent = undefined;
  await api.close();
});

const deletes = () => api.requests.filter((request) => request.method === 'DELETE');
/** An Event as the stand-in stores it: what these tests read of the agent's. */
type StoredEvent = KubeObject & Pick<AgentEvent, 'reason' | 'message' | 'type' | 'count' | 'involvedObject'>;
const storedEvents = (): StoredEvent[] => api.store.list('events') as StoredEvent[];
const eventsFor = (name: string, reason?: string) =>
  storedEvents().filter((event) => event.involvedObject.name === name && (!reason || event.reason === reason));
const taintsOf = (node: string): Taint[] =>
  (api.store.get('nodes', undefined, node) as KubeObject & { spec: { taints?: Taint[] } }).spec.taints ?? [];
const ready = async () => waitFor('readyz', async () => (await fetch(`${agent!.base}/readyz`)).status === 200);
/** A pod that is reported, never deleted: once its Event is there, everything queued before it was handled. */
async function barrier(name: string): Promise<void> {
  api.store.put('pods', crashLoopPod({ name, message: 'ConfigInvalid: barrier' }));
  await waitFor(`the Event on ${name}`, () => eventsFor(name, 'InterlockBlocked').length > 0);
}

describe('interlock node against the API stand-in', () => {
  it('recreates a CrashLoopBackOff pod once, with uid and resourceVersion preconditions, and says so on the pod', async () => {
    agent = await startAgent(api, []);
    await ready();
    let pod = api.store.put('pods', crashLoopPod({ name: 'web-1' }));
    const uid = pod.metadata.uid;
    for (let restart = 3; restart < 6; restart++) {
      const next = structuredClone(pod) as FixturePod;
      next.status.initContainerStatuses[0]!.restartCount = restart;
      if (api.store.get('pods', 'default', 'web-1')) pod = api.store.put('pods', next);
    }
    await waitFor('the Recreating Event', () => eventsFor('web-1', 'InterlockRecreating').length > 0);
    await barrier('barrier');
    expect(deletes()).toHaveLength(1);
    expect(deletes()[0]!.body).toMatchObject({ preconditions: { uid, resourceVersion: expect.any(String) } });
    const [event] = eventsFor('web-1', 'InterlockRecreating');
    expect(event).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'Pod', uid, fieldPath: 'spec.initContainers{linkerd-network-validator}' },
    });
    expect(event?.message).toContain('PodNetworkMissing');
    expect(api.store.get('pods', 'default', 'web-1')).toBeUndefined();
  });

  it('catches a Job pod (restartPolicy Never) and notes the Job backoffLimit', async () => {
    api.store.put('pods', failedJobPod({ name: 'job-1' }));
    agent = await startAgent(api, []);
    const [event] = await waitFor('the Job pod Event', () => {
      const found = eventsFor('job-1', 'InterlockRecreating');
      return found.length > 0 && found;
    });
    expect(event?.message).toMatch(/InterceptionMissing.*backoffLimit/s);
    expect(deletes().map((request) => request.path)).toEqual(['/api/v1/namespaces/default/pods/job-1']);
  });

  it('spares a new pod that took the same name (409 on the uid precondition)', async () => {
    agent = await startAgent(api, []);
    await ready();
    api.faults.add({ method: 'DELETE', fault: { kind: 'delay', ms: 600 }, times: 1 });
    const old = api.store.put('pods', crashLoopPod({ name: 'same' }));
    await waitFor('the DELETE to arrive', () => api.arrivals.includes('DELETE /api/v1/namespaces/default/pods/same'));
    api.store.remove('pods', 'default', 'same');
    const replacement = api.store.put('pods', healthyPod({ name: 'same' }));
    await waitFor('the DELETE to be answered', () => deletes().length === 1);
    expect(deletes()[0]!.status).toBe(409);
    expect(replacement.metadata.uid).not.toBe(old.metadata.uid);
    expect(api.store.get('pods', 'default', 'same')?.metadata.uid).toBe(replacement.metadata.uid);
    await barrier('barrier');
    expect(eventsFor('same', 'InterlockRecreating')).toEqual([]);
    expect(
      metric(await agent.metrics(), 'interlock_node_actions_total{kind="delete",result="precondition-failed"}'),
    ).toBe(1);
  });

  it('--action label patches the label (resourceVersion precondition) instead of deleting', async () => {
    api.store.put('pods', crashLoopPod({ name: 'labelled' }));
    agent = await startAgent(api, ['--action', 'label']);
    await waitFor('the Marked Event', () => eventsFor('labelled', 'InterlockMarked').length > 0);
    expect(api.store.get('pods', 'default', 'labelled')?.metadata.labels).toMatchObject({
      app: 'web',
      'interlock.dev/blocked': 'true',
    });
    const patch = api.requests.find((request) => request.method === 'PATCH')!;
    expect(patch.body).toMatchObject({ metadata: { resourceVersion: expect.any(String) } });
    expect(deletes()).toEqual([]);
  });

  it('reports a ConfigInvalid pod and does not delete it', async () => {
    api.store.put(
      'pods',
      crashLoopPod({ name: 'bad-flags', message: 'ConfigInvalid: --inbound-port "x": expected 1-65535' }),
    );
    agent = await startAgent(api, []);
    const [event] = await waitFor('the Blocked Event', () => {
      const found = eventsFor('bad-flags', 'InterlockBlocked');
      return found.length > 0 && found;
    });
    expect(event?.message).toMatch(/ConfigInvalid: recreating the pod cannot fix this/);
    await barrier('barrier');
    expect(deletes()).toEqual([]);
    expect(api.store.get('pods', 'default', 'bad-flags')).toBeDefined();
    // The pod and the barrier: each counted once, however many times the agent saw them.
    expect(metric(await agent.metrics(), 'interlock_node_blocked_pods_total{reason="ConfigInvalid"}')).toBe(2);
  });

  it('resumes a dropped watch from its resourceVersion and catches a failure that happened in between, exactly once', async () => {
    const pod = api.store.put('pods', healthyPod({ name: 'quiet' }));
    agent = await startAgent(api, []);
    await ready();
    await waitFor('the watch to open', () => api.arrivals.includes('GET /api/v1/pods watch'));
    api.faults.add({ watch: true, fault: { kind: 'delay', ms: 400 }, times: 1 });
    api.dropWatches();
    const failed = crashLoopPod({ name: 'quiet' });
    failed.metadata.uid = pod.metadata.uid;
    api.store.put('pods', failed);
    await waitFor('the Recreating Event', () => eventsFor('quiet', 'InterlockRecreating').length > 0);
    api.dropWatches();
    await barrier('barrier');
    expect(deletes()).toHaveLength(1);
    const lists = api.requests.filter((request) => request.path === '/api/v1/pods' && !request.watch);
    expect(lists).toHaveLength(1);
    const resumed = api.requests
      .filter((request) => request.watch)
      .map((request) => request.query.get('resourceVersion'));
    expect(resumed.length).toBeGreaterThanOrEqual(2);
    expect(resumed.every((rv) => rv !== null && rv !== '0')).toBe(true);
    // A cut before the answer's headers reach the agent is an `error`, after them a `dropped`: both resume.
    const text = await agent.metrics();
    const restarts = ['dropped', 'error'].reduce(
      (sum, cause) => sum + metric(text, `interlock_node_watch_restarts_total{cause="${cause}"}`),
      0,
    );
    expect(restarts).toBeGreaterThanOrEqual(2);
  });

  it('resumes from the last bookmark, not from the old list: changes elsewhere in the cluster are not replayed', async () => {
    agent = await startAgent(api, []);
    await ready();
    await waitFor('the watch to open', () => api.arrivals.includes('GET /api/v1/pods watch'));
    const listed = Number(
      api.requests.find((request) => request.path === '/api/v1/pods' && !request.watch)!.query.get('resourceVersion') ??
        0,
    );
    for (let i = 0; i < 20; i++) api.store.put('pods', healthyPod({ name: `elsewhere-${i}`, nodeName: 'node-b' }));
    const after = api.store.resourceVersion;
    // A bookmark goes out every 200 ms; wait for two so the agent has surely read one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    api.dropWatches();
    await waitFor(
      'the resumed watch',
      () => api.arrivals.filter((line) => line === 'GET /api/v1/pods watch').length >= 2,
    );
    await barrier('barrier');
    api.dropWatches();
    await waitFor('the second watch to be logged', () => api.requests.filter((request) => request.watch).length >= 2);
    const resumedAt = api.requests
      .filter((request) => request.watch)
      .map((request) => Number(request.query.get('resourceVersion')));
    expect(listed).toBe(0);
    expect(resumedAt[0]).toBeLessThan(after);
    expect(resumedAt[1]).toBeGreaterThanOrEqual(after);
  });

  it('relists on 410 Gone and still catches the pod that failed while it was away', async () => {
    agent = await startAgent(api, []);
    await ready();
    await waitFor('the watch to open', () => api.arrivals.includes('GET /api/v1/pods watch'));
    api.faults.add({ watch: true, fault: { kind: 'delay', ms: 400 }, times: 1 });
    api.dropWatches();
    api.store.put('pods', crashLoopPod({ name: 'while-away' }));
    api.store.compact();
    await waitFor('the Recreating Event', () => eventsFor('while-away', 'InterlockRecreating').length > 0);
    expect(api.requests.filter((request) => request.path === '/api/v1/pods' && !request.watch)).toHaveLength(2);
    expect(metric(await agent.metrics(), 'interlock_node_watch_restarts_total{cause="expired"}')).toBe(1);
    expect(deletes()).toHaveLength(1);
  });

  it('starts its paged list over when the continue token expires between pages (410), and syncs', async () => {
    for (let i = 0; i < 501; i++)
      api.store.put('pods', healthyPod({ name: `many-${String(i).padStart(3, '0')}`, ownerUid: `o${i}` }));
    api.store.put('pods', crashLoopPod({ name: 'zz-blocked' }));
    api.faults.add({ method: 'GET', search: /continue=/, fault: { kind: 'delay', ms: 300 }, times: 1 });
    const compactor = waitFor(
      'the second page to arrive',
      () => api.arrivals.filter((line) => line === 'GET /api/v1/pods').length >= 2,
    ).then(() => {
      // A write elsewhere, then compaction: the token's version is now older than the history.
      api.store.put('pods', healthyPod({ name: 'elsewhere', nodeName: 'node-b' }));
      api.store.compact();
    });
    agent = await startAgent(api, []);
    await compactor;
    await waitFor('the Recreating Event', () => eventsFor('zz-blocked', 'InterlockRecreating').length > 0);
    const pages = api.requests
      .filter((request) => request.path === '/api/v1/pods' && !request.watch)
      .map((request) => `${request.query.has('continue') ? 'next' : 'first'} ${request.status}`);
    expect(pages).toEqual(['first 200', 'next 410', 'first 200', 'next 200']);
    // 501 healthy pods plus the blocked one, which is gone once recreated.
    expect(metric(await agent.metrics(), 'interlock_node_pods_watched')).toBe(501);
  });

  it('a continue token that always expires does not become a storm of relists', async () => {
    for (let i = 0; i < 501; i++)
      api.store.put('pods', healthyPod({ name: `many-${String(i).padStart(3, '0')}`, ownerUid: `o${i}` }));
    api.faults.add({ method: 'GET', search: /continue=/, fault: { kind: 'status', code: 410 } });
    agent = await startAgent(api, []);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const lists = api.requests.filter((request) => request.path === '/api/v1/pods' && !request.watch);
    // Three tries per round, then the informer's exponential pause (0.25-0.5 s, then 0.5-1 s, ...).
    expect(lists.length).toBeLessThanOrEqual(18);
    expect(
      metric(await agent.metrics(), 'interlock_node_api_errors_total{operation="watch",status="410"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('a watch that always answers 410 does not become a storm of list+watch', async () => {
    api.faults.add({ watch: true, fault: { kind: 'status', code: 410 } });
    agent = await startAgent(api, []);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const lists = api.requests.filter((request) => request.path === '/api/v1/pods' && !request.watch);
    expect(lists.length).toBeLessThanOrEqual(8);
    expect(
      metric(await agent.metrics(), 'interlock_node_watch_restarts_total{cause="expired"}'),
    ).toBeGreaterThanOrEqual(2);
  });

  it('backs off on 500 and honours Retry-After on 429: no storm of retries', async () => {
    api.faults.add({ method: 'DELETE', fault: { kind: 'status', code: 500 }, times: 3 });
    api.faults.add({ method: 'POST', fault: { kind: 'status', code: 429, retryAfterSeconds: 2 }, times: 1 });
    for (let i = 0; i < 4; i++) api.store.put('pods', crashLoopPod({ name: `p${i}`, ownerUid: `owner-${i}` }));
    agent = await startAgent(api, ['--breaker-threshold', '10']);
    await waitFor(
      'four Recreating Events',
      () => storedEvents().filter((event) => event.reason === 'InterlockRecreating').length === 4,
      20_000,
    );
    const writes = api.requests.filter((request) => request.method !== 'GET').sort((a, b) => a.at - b.at);
    const failedDeletes = writes.filter((request) => request.method === 'DELETE' && request.status === 500);
    expect(failedDeletes).toHaveLength(3);
    // Every write after a 500 waits at least half the exponential step (250 ms, 500 ms, 1 s), never a burst.
    for (let i = 1; i < failedDeletes.length; i++)
      expect(failedDeletes[i]!.at - failedDeletes[i - 1]!.at).toBeGreaterThanOrEqual(240 * 2 ** (i - 1));
    const throttled = writes.findIndex((request) => request.status === 429);
    expect(writes[throttled + 1]!.at - writes[throttled]!.at).toBeGreaterThanOrEqual(1990);
    expect(deletes().filter((request) => request.status === 200)).toHaveLength(4);
    expect(metric(await agent.metrics(), 'interlock_node_api_errors_total{operation="delete",status="500"}')).toBe(3);
  });

  it('50 pods failing at once: at most N deletes, the breaker opens with a Node Event and the taint, and both are undone after a quiet window', async () => {
    agent = await startAgent(api, ['--taint', '--breaker-window', '2s', '--trusted-image', 'mesh-interlock']);
    await ready();
    const finishedAt = new Date().toISOString();
    for (let i = 0; i < 50; i++)
      api.store.put(
        'pods',
        crashLoopPod({
          name: `storm-${String(i).padStart(2, '0')}`,
          // Many tenants' pods: the breaker wants owners from at least two namespaces.
          namespace: `team-${i % 5}`,
          ownerUid: `owner-${i}`,
          image: 'mesh-interlock:dev',
          finishedAt,
        }),
      );
    const opened = await waitFor('the breaker Event on the Node', () =>
      storedEvents().find((event) => event.involvedObject.kind === 'Node' && event.reason === 'InterlockBreakerOpen'),
    );
    expect(opened).toMatchObject({ involvedObject: { name: 'node-a', uid: 'node-a' }, type: 'Warning' });
    await waitFor('the taint', () =>
      taintsOf('node-a').some((taint) => taint.key === 'interlock.dev/cni-not-ready' && taint.effect === 'NoSchedule'),
    );
    const openedAt = api.requests.find(
      (request) =>
        request.method === 'POST' &&
        (request.body as KubeObject & { reason?: string }).reason === 'InterlockBreakerOpen',
    )!.at;
    expect(deletes().filter((request) => request.at <= openedAt).length).toBeLessThanOrEqual(5);
    expect(metric(await agent.metrics(), 'interlock_node_breaker_open')).toBe(1);
    await waitFor(
      'the breaker to close',
      () =>
        storedEvents().some(
          (event) => event.involvedObject.kind === 'Node' && event.reason === 'InterlockBreakerClosed',
        ),
      15_000,
    );
    expect(taintsOf('node-a')).toEqual([]);
    expect(metric(await agent.metrics(), 'interlock_node_breaker_open')).toBe(0);
  });

  it('SIGTERM: the in-flight delete and its Event finish, and the agent exits 0 within 5 s', async () => {
    agent = await startAgent(api, []);
    await ready();
    api.faults.add({ method: 'DELETE', fault: { kind: 'delay', ms: 1500 }, times: 1 });
    api.store.put('pods', crashLoopPod({ name: 'in-flight' }));
    await waitFor('the DELETE to arrive', () =>
      api.arrivals.includes('DELETE /api/v1/namespaces/default/pods/in-flight'),
    );
    const { code, ms } = await agent.terminate();
    expect(code).toBe(0);
    expect(ms).toBeLessThan(5000);
    expect(deletes().map((request) => request.status)).toEqual([200]);
    expect(eventsFor('in-flight', 'InterlockRecreating')).toHaveLength(1);
    expect(agent.logs.some((line) => line.msg === 'stopped: in-flight actions finished')).toBe(true);
  });

  it('serves /healthz, /readyz (503 until the first list is in) and the metrics the issue names', async () => {
    api.faults.add({
      method: 'GET',
      watch: false,
      path: /^\/api\/v1\/pods$/,
      fault: { kind: 'status', code: 500 },
      times: 1,
    });
    agent = await startAgent(api, []);
    const early = await fetch(`${agent.base}/readyz`);
    expect(early.status).toBe(503);
    await ready();
    expect((await fetch(`${agent.base}/healthz`)).status).toBe(200);
    const text = await agent.metrics();
    for (const name of [
      'interlock_node_pods_watched',
      'interlock_node_blocked_pods_total',
      'interlock_node_actions_total',
      'interlock_node_breaker_open',
      'interlock_node_watch_restarts_total',
      'interlock_node_api_errors_total',
      'interlock_node_queue_depth',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });
});
