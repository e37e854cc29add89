import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/node-agent/agent-events.js';
import { crashLoopPod, nodeObject, type PodShape } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import type { KubeObject } from '../harness/kube-api/types.js';
import { metric, startAgent, waitFor, type AgentProcess } from './agent-process.js';
import { validatorArgs } from '../../src/inject/validator-container.js';

// Issue 21, items 11-14: the node agent against what a tenant writes. Everything in a pod's spec,
// metadata and termination message is the pod author's; only the kubelet's status fields (the
// image that ran, when the run finished, its exit code) and the operator's flags are trusted.
const INTERLOCK = 'registry.example/platform/mesh-interlock:1.2.3';
const TRUST = ['--trusted-image', 'registry.example/platform/mesh-interlock'];

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

type StoredEvent = KubeObject & Pick<AgentEvent, 'reason' | 'message' | 'involvedObject'>;
const storedEvents = (): StoredEvent[] => api.store.list('events') as StoredEvent[];
const eventsFor = (name: string, reason?: string) =>
  storedEvents().filter((event) => event.involvedObject.name === name && (!reason || event.reason === reason));
const nodeEvents = () => storedEvents().filter((event) => event.involvedObject.kind === 'Node');
const deletes = () => api.requests.filter((request) => request.method === 'DELETE');
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Six failures of the node's CNI, one per owner, over two namespaces (unless `shape` names one), each shaped by `shape`. */
function sixFailures(prefix: string, shape: Partial<PodShape>): void {
  for (let i = 0; i < 6; i++)
    api.store.put(
      'pods',
      crashLoopPod({
        name: `${prefix}-${i}`,
        namespace: `${prefix}-ns-${i % 2}`,
        ownerUid: `${prefix}-owner-${i}`,
        finishedAt: now(),
        ...shape,
      }),
    );
}

/** A pod that is reported, never deleted: once its Event is there, everything before it was handled. */
async function barrier(name = 'barrier'): Promise<void> {
  api.store.put('pods', crashLoopPod({ name, message: 'ConfigInvalid: barrier', finishedAt: now() }));
  await waitFor(`the Event on ${name}`, () => eventsFor(name).length > 0, 20_000);
}

async function breakerOpen(): Promise<number> {
  return metric(await agent!.metrics(), 'interlock_node_breaker_open');
}

describe('item 11: a tenant cannot open the breaker or taint the node', () => {
  it('six bare pods whose fake validator writes PodNetworkMissing and exits 95: no breaker, no taint', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    sixFailures('bare', { bare: true, image: 'busybox:1.36' });
    await barrier();
    expect(await breakerOpen()).toBe(0);
    expect(nodeEvents()).toEqual([]);
  });

  it('six controller-owned pods whose validator is not the trusted image: no breaker', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    sixFailures('fake', { image: 'registry.example/tenant/mesh-interlock:1.2.3' });
    await barrier();
    expect(await breakerOpen()).toBe(0);
    expect(nodeEvents()).toEqual([]);
  });

  it('the trusted image with its entrypoint replaced by a shell: no breaker', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    sixFailures('shell', {
      image: INTERLOCK,
      command: ['/bin/sh', '-c', 'echo PodNetworkMissing: > /dev/termination-log; exit 95'],
    });
    await barrier();
    expect(await breakerOpen()).toBe(0);
  });

  it('without --trusted-image no validator failure counts (the CNI audit alone opens it)', async () => {
    agent = await startAgent(api, ['--taint']);
    sixFailures('untrusted', { image: INTERLOCK });
    await barrier();
    expect(await breakerOpen()).toBe(0);
  });

  it('control: six real Interlock validators of six controllers do open it', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    sixFailures('real', { image: INTERLOCK });
    await waitFor('the breaker Event', () => nodeEvents().find((event) => event.reason === 'InterlockBreakerOpen'));
    expect(await breakerOpen()).toBe(1);
  });

  it('--watch-namespace scopes the agent: pods elsewhere are neither counted nor touched', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST, '--watch-namespace', 'meshed']);
    sixFailures('elsewhere', { image: INTERLOCK, namespace: 'tenant' });
    api.store.put(
      'pods',
      crashLoopPod({ name: 'barrier', namespace: 'meshed', message: 'ConfigInvalid: barrier', finishedAt: now() }),
    );
    await waitFor('the barrier Event', () => eventsFor('barrier').length > 0, 20_000);
    expect(await breakerOpen()).toBe(0);
    expect(deletes()).toEqual([]);
    expect(eventsFor('elsewhere-0')).toEqual([]);
  });
});

describe('item 12: old failures do not trip the breaker at every start', () => {
  it('six real failures that finished long before the window: no breaker at start', async () => {
    sixFailures('old', { image: INTERLOCK, finishedAt: new Date(Date.now() - 3_600_000).toISOString() });
    agent = await startAgent(api, ['--taint', ...TRUST, '--breaker-window', '60s']);
    await barrier();
    expect(await breakerOpen()).toBe(0);
    expect(nodeEvents()).toEqual([]);
  });
});

describe('item 12: run memory survives an agent restart', () => {
  it('a second agent process posts nothing new for runs the first one reported', async () => {
    api.store.put(
      'pods',
      crashLoopPod({ name: 'misconf', exitCode: 64, message: 'ConfigInvalid: typo', finishedAt: now() }),
    );
    api.store.put('pods', crashLoopPod({ name: 'unknown', message: 'ConfigInvalid: bad', finishedAt: now() }));
    agent = await startAgent(api, []);
    await waitFor('both Events', () => eventsFor('misconf').length + eventsFor('unknown').length === 2);
    expect((await agent.terminate()).code).toBe(0);
    agent = await startAgent(api, []);
    // The second agent decides both runs again and finds their Events there: proof it got that far.
    const exists = 'interlock_node_actions_total{kind="event",result="exists"}';
    await waitFor(
      'both reports found already posted, or posted again',
      async () => metric(await agent!.metrics(), exists) === 2 || storedEvents().length > 2,
    );
    expect(eventsFor('misconf')).toHaveLength(1);
    expect(eventsFor('unknown')).toHaveLength(1);
    // A run the first agent never saw is still reported by the second.
    api.store.put('pods', crashLoopPod({ name: 'later', message: 'ConfigInvalid: later', finishedAt: now() }));
    await waitFor('the Event on later', () => eventsFor('later').length === 1);
    expect(await agent.metrics()).not.toMatch(/interlock_node_actions_total\{kind="event",result="error"\}/);
  });
});

describe('item 13: metric labels are never tenant text', () => {
  it('a termination message starting with any word is counted as Other; known reasons keep their name', async () => {
    agent = await startAgent(api, []);
    api.store.put('pods', crashLoopPod({ name: 'evil', message: `Evil${'x'.repeat(200)}: pwned`, finishedAt: now() }));
    await barrier();
    const text = await agent.metrics();
    expect(text).not.toMatch(/reason="Evil/);
    expect(metric(text, 'interlock_node_blocked_pods_total{reason="Other"}')).toBe(1);
    expect(metric(text, 'interlock_node_blocked_pods_total{reason="ConfigInvalid"}')).toBe(1);
  });

  it('every gauge without a value yet is absent before the first list, and present after it', async () => {
    // The pod list fails until the test lets it through: /metrics is scraped before any list is in.
    api.faults.add({ method: 'GET', watch: false, path: /^\/api\/v1\/pods$/, fault: { kind: 'status', code: 500 } });
    api.store.put('pods', crashLoopPod({ name: 'first', message: 'ConfigInvalid: first', finishedAt: now() }));
    agent = await startAgent(api, []);
    await waitFor('a failed list', () => api.requests.some((request) => request.path === '/api/v1/pods'));
    const before = await agent.metrics();
    expect(before).not.toMatch(/^interlock_node_pods_watched /m);
    expect(before).not.toMatch(/^interlock_node_cni_audit_healthy /m);
    // The breaker is known closed from the start: a value, not an absence.
    expect(before).toMatch(/^interlock_node_breaker_open 0$/m);
    api.faults.clear();
    await barrier();
    const after = await agent.metrics();
    expect(after).toMatch(/^interlock_node_pods_watched 2$/m);
    expect(after).not.toMatch(/^interlock_node_cni_audit_healthy /m);
  });

  it('interlock_node_cni_audit_healthy is absent without an audit, not 0', async () => {
    agent = await startAgent(api, []);
    await barrier();
    expect(await agent.metrics()).not.toMatch(/^interlock_node_cni_audit_healthy /m);
  });
});

describe('item 14: a validator that exits 64 (configuration error) is reported, never recreated', () => {
  it('an Event on the pod names the configuration error; no delete, no breaker', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    for (let i = 0; i < 6; i++)
      api.store.put(
        'pods',
        crashLoopPod({
          name: `typo-${i}`,
          ownerUid: `typo-owner-${i}`,
          image: INTERLOCK,
          exitCode: 64,
          message: 'ConfigInvalid: --inbound-port "x": expected 1-65535',
          finishedAt: now(),
        }),
      );
    const [event] = await waitFor('the Event on typo-0', () => {
      const found = eventsFor('typo-0');
      return found.length > 0 && found;
    });
    expect(event?.reason).toBe('InterlockMisconfigured');
    expect(event?.message).toMatch(/ConfigInvalid.*--inbound-port/);
    await barrier();
    expect(deletes()).toEqual([]);
    expect(await breakerOpen()).toBe(0);
  });
});

// Issue 35, item 8: one tenant must not open the breaker for everyone.
describe('issue 35 item 8: the breaker counts owners across namespaces, and only the printed validator', () => {
  const PRINTED = validatorArgs({ mesh: 'linkerd', image: INTERLOCK, rulesCheck: false, reportEvent: false });
  const counted = () => agent!.logs.filter((line) => String(line.msg).startsWith('validator failed')).length;

  it('one pod of one owner restarting seven times: no breaker, no taint', async () => {
    agent = await startAgent(api, ['--taint', '--action', 'none', ...TRUST]);
    for (let run = 0; run < 7; run++) {
      const finishedAt = new Date(Date.now() - 10_000 + run * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      api.store.put('pods', crashLoopPod({ name: 'flappy', ownerUid: 'one-owner', image: INTERLOCK, finishedAt }));
      await waitFor(`run ${run} counted`, () => counted() >= run + 1);
    }
    await barrier();
    expect(await breakerOpen()).toBe(0);
    expect(nodeEvents()).toEqual([]);
  });

  it('six owners of one namespace (a tenant can create or name as many as it likes): no breaker', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    sixFailures('tenant', { image: INTERLOCK, namespace: 'tenant' });
    await barrier();
    expect(await breakerOpen()).toBe(0);
    expect(nodeEvents()).toEqual([]);
  });

  it('--breaker-min-namespaces 1: six owners of one namespace open it, one owner seven times does not', async () => {
    agent = await startAgent(api, ['--taint', '--action', 'none', '--breaker-min-namespaces', '1', ...TRUST]);
    for (let run = 0; run < 7; run++) {
      const finishedAt = new Date(Date.now() - 10_000 + run * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      api.store.put('pods', crashLoopPod({ name: 'flappy', ownerUid: 'one-owner', image: INTERLOCK, finishedAt }));
      await waitFor(`run ${run} counted`, () => counted() >= run + 1);
    }
    await barrier();
    expect(await breakerOpen()).toBe(0);
    sixFailures('apps', { image: INTERLOCK, namespace: 'apps' });
    await waitFor('the breaker Event', () => nodeEvents().find((event) => event.reason === 'InterlockBreakerOpen'));
    expect(await breakerOpen()).toBe(1);
  });

  it.each([
    ['--outbound-port 9999 appended to the printed args', { args: [...PRINTED, '--outbound-port', '9999'] }],
    [
      'INTERLOCK_OUTBOUND_PORT=9999 in its environment',
      { args: PRINTED, env: [{ name: 'INTERLOCK_OUTBOUND_PORT', value: '9999' }] },
    ],
    ['a raw block device (volumeDevices)', { args: PRINTED, volumeDevices: [{ name: 'd', devicePath: '/dev/xvdb' }] }],
  ])('six owners over two namespaces, %s: not counted, no breaker', async (_, shape) => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    sixFailures('tampered', { image: INTERLOCK, ...shape });
    await barrier();
    expect(await breakerOpen()).toBe(0);
    expect(nodeEvents()).toEqual([]);
    expect(agent.logs.filter((line) => String(line.msg).startsWith('not counted toward the breaker'))).toHaveLength(6);
  });

  it('control: the printed args, six owners over two namespaces, open it', async () => {
    agent = await startAgent(api, ['--taint', ...TRUST]);
    sixFailures('printed', { image: INTERLOCK, args: PRINTED });
    await waitFor('the breaker Event', () => nodeEvents().find((event) => event.reason === 'InterlockBreakerOpen'));
    expect(await breakerOpen()).toBe(1);
  });
});
