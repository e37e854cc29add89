import { describe, expect, it } from 'vitest';
import type { ApiResult, CreateOutcome, DeleteOutcome, PodRef } from '../../../src/kube/pods-api.js';
import { NodeAgent } from '../../../src/node-agent/agent.js';
import type { AgentEvent } from '../../../src/node-agent/agent-events.js';
import type { AgentMetrics } from '../../../src/node-agent/agent-metrics.js';
import { REAL_CLOCK, type AgentSettings } from '../../../src/node-agent/agent-settings.js';
import { recheckPodOf, type RecheckPod } from '../../../src/node-agent/recheck/meshed-pod.js';
import { shippedValidator } from '../../../src/cli/commands/node/shipped-validator.js';
import { crashLoopPod } from '../../harness/kube-api/pods.js';

const quiet = new Proxy({}, { get: () => () => undefined }) as AgentMetrics;
const log = { info() {}, warn() {}, error() {} };

function agentWith() {
  const deleted: PodRef[] = [];
  const events: AgentEvent[] = [];
  const settings: AgentSettings = {
    node: 'node-a',
    container: 'linkerd-network-validator',
    failureExitCode: 95,
    action: 'none',
    taint: false,
    backoff: { baseMs: 1, maxMs: 10, maxRecreations: 1, windowMs: 600_000 },
    breaker: { threshold: 5, windowMs: 60_000, minNamespaces: 1 },
    retry: { baseMs: 1, maxMs: 10 },
    queueCapacity: 16,
    writesPerSecond: 1000,
    writeBurst: 1000,
    trustedImages: ['mesh-interlock'],
    shipped: shippedValidator('linkerd'),
  };
  const agent = new NodeAgent(settings, {
    api: {
      deletePod: async (ref): Promise<ApiResult<DeleteOutcome>> => (deleted.push(ref), { ok: true, value: 'deleted' }),
      labelPod: async () => ({ ok: true, value: 'deleted' }),
      createEvent: async (event): Promise<ApiResult<CreateOutcome>> => (
        events.push(event),
        { ok: true, value: 'created' }
      ),
      setTaint: async () => ({ ok: true, value: 'changed' }),
    },
    metrics: quiet,
    log,
    clock: REAL_CLOCK,
    random: () => 0.5,
  });
  return { agent, deleted, events };
}

const lostPod = (name: string, owner?: { kind: string; uid: string }): RecheckPod =>
  recheckPodOf({
    metadata: {
      name,
      namespace: 'shop',
      uid: `${name}-uid`,
      resourceVersion: '9',
      ...(owner ? { ownerReferences: [{ ...owner, controller: true }] } : {}),
    },
    spec: {
      nodeName: 'node-a',
      initContainers: [{ name: 'linkerd-network-validator' }],
      containers: [{ name: 'app' }],
    },
    status: { phase: 'Running', podIP: '10.0.0.9' },
  })!;
const reasons = (events: AgentEvent[], name: string) =>
  events.filter((event) => event.involvedObject.name === name).map((event) => event.reason);

describe('a confirmed loss, through the agent', () => {
  it("an ambient pod's listeners gone (istio/istio#57285): the Warning says ZtunnelNotListening, not CaptureLost", async () => {
    const { agent, events } = agentWith();
    const message = "ztunnel's listeners gone after the pod started (istio-ambient; two sweeps agree): x";
    await agent.captureLost(lostPod('mesh'), message, 'ZtunnelNotListening@1', 'report', 'ZtunnelNotListening');
    expect(events.map((event) => [event.reason, event.type, event.message])).toEqual([
      ['ZtunnelNotListening', 'Warning', message],
    ]);
  });

  it('report: one CaptureLost Warning on the pod, in the validator’s words, and nothing deleted', async () => {
    const { agent, deleted, events } = agentWith();
    await agent.captureLost(lostPod('web'), 'Capture lost after the pod started: x', 'CaptureLost@1', 'report');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      reason: 'CaptureLost',
      type: 'Warning',
      message: 'Capture lost after the pod started: x',
    });
    expect(events[0]!.involvedObject).toMatchObject({ kind: 'Pod', name: 'web', uid: 'web-uid' });
    expect(deleted).toEqual([]);
  });

  it('delete: preconditions, then the owner’s backoff bounds it; a bare pod is only reported', async () => {
    const { agent, deleted, events } = agentWith();
    await agent.captureLost(lostPod('a', { kind: 'ReplicaSet', uid: 'rs' }), 'm', 'CaptureLost@1', 'delete');
    expect(deleted).toEqual([{ namespace: 'shop', name: 'a', uid: 'a-uid', resourceVersion: '9' }]);
    expect(reasons(events, 'a')).toEqual(['CaptureLost', 'InterlockRecreating']);
    await agent.captureLost(lostPod('b', { kind: 'ReplicaSet', uid: 'rs' }), 'm', 'CaptureLost@2', 'delete');
    expect(deleted).toHaveLength(1);
    expect(reasons(events, 'b')).toEqual(['CaptureLost', 'InterlockRecreateLimit']);
    await agent.captureLost(lostPod('bare'), 'm', 'CaptureLost@3', 'delete');
    expect(deleted).toHaveLength(1);
    expect(reasons(events, 'bare')).toEqual(['CaptureLost', 'InterlockBlocked']);
  });

  it('delete: an open breaker holds it', async () => {
    const { agent, deleted, events } = agentWith();
    // An unhealthy audit confirmed by a trusted validator failure on the node opens the breaker.
    agent.audit({ healthy: false, message: 'no mesh plugin in the chain' });
    const finishedAt = new Date().toISOString();
    agent.relisted([crashLoopPod({ name: 'f', ownerUid: 'of', image: 'mesh-interlock:dev', finishedAt })]);
    expect(agent.breakerOpen).toBe(true);
    await agent.captureLost(lostPod('c', { kind: 'ReplicaSet', uid: 'rs2' }), 'm', 'CaptureLost@4', 'delete');
    expect(deleted).toEqual([]);
    expect(reasons(events, 'c')).toEqual(['CaptureLost', 'InterlockHeld']);
  });
});
