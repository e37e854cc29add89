import { describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../src/node-agent/agent-settings.js';
import { crashLoopPod, type PodShape } from '../harness/kube-api/pods.js';
import { fakeAgent } from './agent-fakes.js';

const agentWith = (over: Partial<AgentSettings> = {}) => fakeAgent(over);

const pod = (i: number, shape: Partial<PodShape> = {}) => ({
  ...crashLoopPod({ name: `p${i}`, ownerUid: `o${i}`, ...shape }),
  metadata: {
    ...crashLoopPod({ name: `p${i}` }).metadata,
    uid: `u${i}`,
    resourceVersion: '1',
    ownerReferences: [{ kind: 'ReplicaSet', uid: `o${i}`, controller: true }],
  },
});

describe('NodeAgent (manual clock, fake API)', () => {
  it('a queue of 2 with 5 blocked pods loses none: the overflow is rescanned', async () => {
    const { agent, api, clock } = agentWith({ queueCapacity: 2 });
    agent.relisted([0, 1, 2, 3, 4].map((i) => pod(i)));
    await clock.advance(100);
    expect(api.deleted.sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
  });

  it('an unhealthy CNI audit alone neither opens the breaker nor taints, however long it fails', async () => {
    const { agent, api, clock } = agentWith();
    agent.relisted([]);
    agent.audit({ healthy: false, message: '/etc/cni/net.d/10-calico.conflist has no linkerd-cni plugin' });
    await clock.advance(10);
    agent.audit({ healthy: false, message: '/etc/cni/net.d/10-calico.conflist has no linkerd-cni plugin' });
    await clock.advance(600_000);
    agent.tickBreaker();
    expect(agent.breakerOpen).toBe(false);
    expect(api.taints).toEqual([]);
    expect(api.events.map((event) => event.reason)).toEqual(['InterlockCniConfigBroken']);
  });

  it('an unhealthy audit with a trusted validator failure in the window opens the breaker and taints; healthy for a window closes it', async () => {
    const finished = Date.parse('2026-11-20T10:00:03Z');
    let wall = finished + 1000;
    const { agent, api, clock } = fakeAgent({ trustedImages: ['mesh-interlock'] }, () => wall);
    agent.relisted([]);
    agent.audit({ healthy: false, message: '/etc/cni/net.d/10-calico.conflist has no linkerd-cni plugin' });
    await clock.advance(10);
    expect(api.taints).toEqual([]);
    // One failure, of one owner: far below the threshold, but the observation the audit lacked.
    agent.relisted([pod(1, { image: 'mesh-interlock:dev', finishedAt: '2026-11-20T10:00:03Z' })]);
    await clock.advance(10);
    expect(agent.breakerOpen).toBe(true);
    expect(api.taints).toEqual([true]);
    expect(api.events.map((event) => event.reason)).toEqual([
      'InterlockCniConfigBroken',
      'InterlockBreakerOpen',
      'InterlockHeld',
    ]);
    const opened = api.events.find((event) => event.reason === 'InterlockBreakerOpen')!;
    expect(opened.message).toContain('CNI audit: /etc/cni/net.d/10-calico.conflist');
    expect(opened.message).toContain('confirmed by a validator failure');
    expect(api.deleted).toEqual([]);
    agent.audit({ healthy: true, message: 'ok' });
    wall += 60_000;
    await clock.advance(59_000);
    agent.tickBreaker();
    await clock.advance(10);
    expect(api.taints).toEqual([true]);
    await clock.advance(1000);
    agent.tickBreaker();
    await clock.advance(10);
    expect(api.taints).toEqual([true, false]);
    // The held pod is acted on once the node is healthy again.
    expect(api.deleted).toEqual(['p1']);
  });

  it('pods blocked for reasons a new pod cannot fix (one bad Deployment) never trip the breaker or taint the node', async () => {
    const { agent, api, clock } = agentWith();
    const misconfigured = [0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
      pod(i, { message: 'ConfigInvalid: --inbound-port "x": expected 1-65535' }),
    );
    agent.relisted(misconfigured);
    await clock.advance(1000);
    expect(agent.breakerOpen).toBe(false);
    expect(api.taints).toEqual([]);
    expect(api.events.map((event) => event.reason)).toEqual(Array(8).fill('InterlockBlocked'));
  });

  it('a ConfigInvalid pod restarting in CrashLoopBackOff is reported once, not at every restart', async () => {
    const { agent, api, clock } = agentWith();
    for (let restart = 0; restart < 5; restart++) {
      const bad = pod(3, {
        message: 'ConfigInvalid: --inbound-port "x": expected 1-65535',
        finishedAt: `2026-11-20T10:0${restart}:00Z`,
      });
      agent.changed('MODIFIED', bad);
      await clock.advance(60_000);
    }
    expect(api.events.map((event) => event.reason)).toEqual(['InterlockBlocked']);
  });

  it('ignores a pod of another node even if the API sends it (the field selector is not trusted)', async () => {
    const { agent, api, clock } = agentWith();
    const stray = pod(9, { nodeName: 'node-b' });
    agent.relisted([stray]);
    agent.changed('MODIFIED', stray);
    await clock.advance(5000);
    expect(api.deleted).toEqual([]);
    expect(api.events).toEqual([]);
  });

  it('the same failed run seen again after a relist is acted on once', async () => {
    const { agent, api, clock } = agentWith();
    agent.relisted([pod(7)]);
    await clock.advance(10);
    agent.relisted([pod(7)]);
    agent.changed('MODIFIED', pod(7));
    await clock.advance(5000);
    expect(api.deleted).toEqual(['p7']);
    expect(api.events.filter((event) => event.reason === 'InterlockRecreating')).toHaveLength(1);
  });
});
