import { describe, expect, it } from 'vitest';
import type { NodeCondition, NodeState } from '../../src/kube/node-status.js';
import type { ApiResult } from '../../src/kube/pods-api.js';
import { meshIdentity } from '../../src/mesh/meshes.js';
import type { AgentClock } from '../../src/node-agent/agent-settings.js';
import { NodeGateReporter } from '../../src/node-agent/node-gate-reporter.js';
import {
  gateVerdict,
  INITIAL_GATE,
  MESH_CONDITION,
  readyToLift,
  type GatePolicy,
  type GateSettings,
  type GateState,
} from '../../src/node-agent/node-gate.js';

const PLUGIN = meshIdentity('istio').cniPlugin!;
const POLICY: GatePolicy = { windowMs: 60_000, plugin: PLUGIN };
const CLEAN = { healthy: true, message: '/etc/cni/net.d is healthy' };
const BROKEN = { healthy: false, message: '10-calico.conflist has no istio-cni' };
const failure = (at: number, pod = 'shop/web-1') => ({
  at,
  pod,
  cause: 'tool-missing' as const,
  detail: 'nft: not found',
  count: 1,
});

describe('gateVerdict: the condition the node state says', () => {
  const state = (over: Partial<GateState>): GateState => ({ ...INITIAL_GATE, audit: CLEAN, ...over });

  it('is Unknown until the first audit verdict, True on a clean one', () => {
    expect(gateVerdict(INITIAL_GATE, POLICY, 0)).toMatchObject({ status: 'Unknown', reason: 'AuditPending' });
    expect(gateVerdict(state({}), POLICY, 0)).toMatchObject({ status: 'True', reason: 'MeshCNIReady' });
  });

  it('is False naming each cause, the broken configuration first', () => {
    expect(gateVerdict(state({ audit: BROKEN, sandbox: [failure(0)] }), POLICY, 0)).toMatchObject({
      status: 'False',
      reason: 'CNIConfigBroken',
      message: `CNI audit: ${BROKEN.message}`,
    });
    const failing = gateVerdict(state({ sandbox: [failure(0), failure(10, 'shop/web-2')] }), POLICY, 10);
    expect(failing).toMatchObject({ status: 'False', reason: 'MeshPluginFailing' });
    expect(failing.message).toContain(`${PLUGIN} failed 2 pod sandbox(es) within 60 s (tool-missing 2)`);
    expect(failing.message).toContain('shop/web-2: nft: not found');
    expect(gateVerdict(state({ breaker: { open: true, why: 'x' } }), POLICY, 0).reason).toBe('BreakerOpen');
    expect(gateVerdict(state({ lost: { open: true, why: 'y' } }), POLICY, 0).reason).toBe('CaptureLost');
  });

  it('forgets a plugin failure once the window passed', () => {
    const old = state({ sandbox: [failure(0)] });
    expect(gateVerdict(old, POLICY, 59_999).status).toBe('False');
    expect(gateVerdict(old, POLICY, 60_000).status).toBe('True');
  });

  it('lifts the start-up taint only when True and no validator failed within the window', () => {
    expect(readyToLift(state({ validatorFailures: [0] }), POLICY, 59_999)).toBe(false);
    expect(readyToLift(state({ validatorFailures: [0] }), POLICY, 60_000)).toBe(true);
    expect(readyToLift(state({ audit: undefined }), POLICY, 0)).toBe(false);
    expect(readyToLift(state({ audit: BROKEN }), POLICY, 0)).toBe(false);
  });
});

class Clock implements AgentClock {
  time = 1_000_000;
  now = () => this.time;
  sleep = async () => undefined;
  later = () => () => undefined;
}

interface Harness {
  readonly gate: NodeGateReporter;
  readonly clock: Clock;
  readonly patches: NodeCondition[];
  readonly lifts: number[];
  readonly events: string[];
  readonly failures: [string, number][];
  readonly ready: string[];
  synced: boolean;
  readable: boolean;
  taintPresent: boolean;
  /** Writes that fail once (a 503), by operation. */
  readonly failOnce: Set<string>;
  wall: number;
  node: NodeState;
}

function harness(over: Partial<GateSettings> = {}): Harness {
  const clock = new Clock();
  const h: Harness = {
    clock,
    patches: [],
    lifts: [],
    events: [],
    failures: [],
    ready: [],
    synced: true,
    readable: true,
    taintPresent: true,
    failOnce: new Set(),
    wall: Date.parse('2026-11-28T10:00:00Z'),
    node: { conditions: [], taints: [{ key: 'readiness.k8s.io/mesh', effect: 'NoSchedule' }] },
    gate: undefined as unknown as NodeGateReporter,
  };
  const ok = <T>(value: T): Promise<ApiResult<T>> => Promise.resolve({ ok: true, value });
  const settings: GateSettings = {
    condition: true,
    startupTaint: { key: 'readiness.k8s.io/mesh' },
    intervalMs: 10_000,
    heartbeatMs: 300_000,
    policy: POLICY,
    breaker: { threshold: 5, windowMs: 60_000, minNamespaces: 2 },
    ...over,
  };
  (h as { gate: NodeGateReporter }).gate = new NodeGateReporter(settings, {
    readNode: () =>
      h.readable
        ? ok(h.node)
        : Promise.resolve({ ok: false, error: { status: 503, retryAfterSeconds: undefined, message: 'down' } }),
    patchCondition: (condition) => (h.patches.push(condition), ok('written' as const)),
    removeStartupTaint: () => (
      h.lifts.push(clock.time),
      ok(h.taintPresent ? ('changed' as const) : ('unchanged' as const))
    ),
    write: async (operation, call) => {
      if (h.failOnce.delete(operation)) return undefined;
      const answer = await call();
      return answer.ok ? answer.value : undefined;
    },
    postNodeEvent: async (reason) => void h.events.push(reason),
    synced: () => h.synced,
    metrics: {
      meshReady: (status) => void h.ready.push(status),
      pluginFailures: (cause, count) => void h.failures.push([cause, count]),
    },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    clock,
    wallNow: () => h.wall,
  });
  return h;
}
const settle = () => new Promise((resolve) => setImmediate(resolve));
async function advance(h: Harness, ms: number, step = 1000): Promise<void> {
  for (let passed = 0; passed < ms; passed += step) {
    h.clock.time += step;
    h.wall += step;
    h.gate.tick();
    await settle();
  }
}

describe('NodeGateReporter: the condition on change, bounded; the taint lifted once', () => {
  it('writes a changed condition at most once per interval, however often the inputs flap (counts the PATCHes)', async () => {
    const h = harness({ startupTaint: undefined });
    h.gate.audit(CLEAN);
    await settle();
    expect(h.patches.map((p) => [p.type, p.status])).toEqual([[MESH_CONDITION, 'True']]);
    // 100 s of an audit that flips every 100 ms: 1,000 changes.
    for (let i = 0; i < 1000; i++) {
      h.clock.time += 100;
      h.wall += 100;
      h.gate.audit(i % 2 === 0 ? BROKEN : CLEAN);
      if (i % 10 === 0) h.gate.tick();
      await settle();
    }
    // One write per 10 s interval at most: 10 in 100 s, after the first.
    expect(h.patches.length).toBeGreaterThanOrEqual(2);
    expect(h.patches.length).toBeLessThanOrEqual(11);
  });

  it('writes a change within one interval, keeps lastTransitionTime on a new message, moves it on a new status', async () => {
    const h = harness({ startupTaint: undefined });
    h.gate.audit(CLEAN);
    await settle();
    const first = h.patches[0]!;
    await advance(h, 3000);
    h.gate.audit({ healthy: true, message: 'another clean message' });
    await advance(h, 10_000);
    expect(h.patches).toHaveLength(2);
    expect(h.patches[1]!.lastTransitionTime).toBe(first.lastTransitionTime);
    h.gate.audit(BROKEN);
    await advance(h, 10_000);
    expect(h.patches).toHaveLength(3);
    expect(h.patches[2]).toMatchObject({ status: 'False', reason: 'CNIConfigBroken' });
    expect(h.patches[2]!.lastTransitionTime).not.toBe(first.lastTransitionTime);
  });

  it('re-writes an unchanged condition only at the heartbeat', async () => {
    const h = harness({ startupTaint: undefined });
    h.gate.audit(CLEAN);
    await settle();
    await advance(h, 290_000, 10_000);
    expect(h.patches).toHaveLength(1);
    await advance(h, 10_000, 10_000);
    expect(h.patches).toHaveLength(2);
    expect(h.patches[1]!.lastHeartbeatTime > h.patches[0]!.lastHeartbeatTime).toBe(true);
    expect(h.patches[1]!.lastTransitionTime).toBe(h.patches[0]!.lastTransitionTime);
  });

  it('after a restart, keeps the transition time the node has and writes nothing new before the heartbeat', async () => {
    const h = harness({ startupTaint: undefined });
    const before = '2026-11-28T09:00:00Z';
    const condition = {
      type: MESH_CONDITION,
      status: 'True',
      reason: 'MeshCNIReady',
      lastHeartbeatTime: '2026-11-28T09:59:00Z',
      lastTransitionTime: before,
    };
    h.node = {
      conditions: [
        {
          ...condition,
          message: `CNI audit clean (${CLEAN.message}); no ${PLUGIN} sandbox failure and no breaker trip within 60 s.`,
        } as NodeCondition,
      ],
      taints: [],
    };
    h.gate.audit(CLEAN);
    await settle();
    expect(h.patches).toHaveLength(0);
    h.gate.audit({ healthy: true, message: 'new words' });
    await advance(h, 10_000);
    expect(h.patches[0]?.lastTransitionTime).toBe(before);
  });

  it('turns False within one interval of a mesh plugin failure, with one Warning, and a Normal when it passed', async () => {
    const h = harness({ startupTaint: undefined });
    h.gate.audit(CLEAN);
    await advance(h, 10_000);
    h.gate.sandbox({
      pod: 'shop/web-1',
      cause: 'tool-missing',
      detail: 'nft: not found',
      occurrences: 3,
      atWallMs: h.wall,
    });
    h.gate.sandbox({
      pod: 'shop/web-2',
      cause: 'tool-missing',
      detail: 'nft: not found',
      occurrences: 1,
      atWallMs: h.wall,
    });
    await advance(h, 10_000);
    expect(h.patches.at(-1)).toMatchObject({ status: 'False', reason: 'MeshPluginFailing' });
    expect(h.events).toEqual(['MeshPluginFailing']);
    await advance(h, 61_000);
    expect(h.patches.at(-1)).toMatchObject({ status: 'True' });
    expect(h.events).toEqual(['MeshPluginFailing', 'MeshPluginRecovered']);
  });

  it('ignores a sandbox failure older than the window (an Event listed at start-up)', async () => {
    const h = harness({ startupTaint: undefined });
    h.gate.audit(CLEAN);
    h.gate.sandbox({ pod: 'shop/web-1', cause: 'other', detail: 'x', occurrences: 1, atWallMs: h.wall - 60_000 });
    await advance(h, 10_000);
    expect(h.patches.every((p) => p.status === 'True')).toBe(true);
  });

  it('holds the start-up taint while broken from boot, lifts it once the audit is clean, and never again', async () => {
    const h = harness({ condition: false });
    h.gate.audit(BROKEN);
    await advance(h, 30_000);
    expect(h.lifts).toEqual([]);
    h.gate.audit(CLEAN);
    await settle();
    expect(h.lifts).toHaveLength(1);
    expect(h.events).toContain('InterlockStartupTaintRemoved');
    h.gate.audit(BROKEN);
    await advance(h, 5000);
    h.gate.audit(CLEAN);
    await advance(h, 5000);
    expect(h.lifts).toHaveLength(1);
    expect(h.patches).toEqual([]);
  });

  it('waits for the reads to sync and for a validator failure to leave the window', async () => {
    const h = harness({ condition: false });
    h.synced = false;
    h.gate.audit(CLEAN);
    await advance(h, 5000);
    expect(h.lifts).toEqual([]);
    h.gate.validatorFailure(h.clock.time);
    h.synced = true;
    await advance(h, 59_000);
    expect(h.lifts).toEqual([]);
    await advance(h, 2000);
    expect(h.lifts).toHaveLength(1);
  });

  it('keeps the taint while the mesh plugin fails even with a clean audit', async () => {
    const h = harness({ condition: false });
    h.gate.sandbox({ pod: 'shop/web-1', cause: 'tool-missing', detail: 'nft', occurrences: 1, atWallMs: h.wall });
    h.gate.audit(CLEAN);
    await advance(h, 30_000);
    expect(h.lifts).toEqual([]);
    await advance(h, 31_000);
    expect(h.lifts).toHaveLength(1);
  });

  it('counts a sighting on its own time: one of 50 s ago leaves the window 10 s later, and an older one is not counted', async () => {
    const h = harness({ startupTaint: undefined });
    h.gate.sandbox({ pod: 'shop/old', cause: 'other', detail: 'x', occurrences: 2, atWallMs: h.wall - 60_000 });
    h.gate.sandbox({ pod: 'shop/web', cause: 'timeout', detail: 'x', occurrences: 3, atWallMs: h.wall - 50_000 });
    h.gate.audit(CLEAN);
    await settle();
    expect(h.failures).toEqual([['timeout', 3]]);
    expect(h.patches.map((p) => p.reason)).toEqual(['MeshPluginFailing']);
    expect(h.patches[0]!.message).toContain('failed 3 pod sandbox(es)');
    await advance(h, 9000);
    expect(h.patches).toHaveLength(1);
    await advance(h, 2000);
    expect(h.patches.at(-1)?.reason).toBe('MeshCNIReady');
    expect(h.ready).toContain('False');
  });

  it('writes nothing while its Node cannot be read (the transition time would be lost), then writes', async () => {
    const h = harness({ startupTaint: undefined });
    h.readable = false;
    h.gate.audit(CLEAN);
    await advance(h, 3000);
    expect(h.patches).toEqual([]);
    h.readable = true;
    await advance(h, 1000);
    expect(h.patches).toHaveLength(1);
  });

  it('writes a change exactly one interval after the last write, not before', async () => {
    const h = harness({ startupTaint: undefined });
    h.gate.audit(CLEAN);
    await settle();
    h.clock.time += 9999;
    h.gate.audit(BROKEN);
    await settle();
    expect(h.patches).toHaveLength(1);
    h.clock.time += 1;
    h.gate.tick();
    await settle();
    expect(h.patches).toHaveLength(2);
  });

  it('after a restart, the heartbeat comes on the written heartbeat time, not a whole period after the start', async () => {
    const h = harness({ startupTaint: undefined });
    const message = `CNI audit clean (${CLEAN.message}); no ${PLUGIN} sandbox failure and no breaker trip within 60 s.`;
    h.node = {
      conditions: [
        {
          type: MESH_CONDITION,
          status: 'True',
          reason: 'MeshCNIReady',
          message,
          lastHeartbeatTime: '2026-11-28T09:56:00Z',
          lastTransitionTime: '2026-11-28T09:00:00Z',
        },
      ],
      taints: [],
    };
    h.gate.audit(CLEAN);
    await advance(h, 50_000, 10_000);
    expect(h.patches).toEqual([]);
    await advance(h, 20_000, 10_000);
    expect(h.patches).toHaveLength(1);
    expect(h.patches[0]!.lastTransitionTime).toBe('2026-11-28T09:00:00Z');
  });

  it('posts no Event when the start-up taint was not on the node, and never tries again', async () => {
    const h = harness({ condition: false });
    h.taintPresent = false;
    h.gate.audit(CLEAN);
    await advance(h, 5000);
    expect(h.lifts).toHaveLength(1);
    expect(h.events).toEqual([]);
  });

  it('writes True only once both reads have listed; False at once', async () => {
    const h = harness({ startupTaint: undefined });
    h.synced = false;
    h.gate.audit(CLEAN);
    await advance(h, 3000);
    expect(h.patches).toEqual([]);
    h.gate.audit(BROKEN);
    await settle();
    expect(h.patches.map((p) => p.status)).toEqual(['False']);
    h.gate.audit(CLEAN);
    h.synced = true;
    await advance(h, 10_000);
    expect(h.patches.map((p) => p.status)).toEqual(['False', 'True']);
  });

  it('retries a condition write that failed at the next interval, and a failed lift at the next tick', async () => {
    const h = harness();
    h.failOnce.add('condition');
    h.failOnce.add('startup-taint');
    h.gate.audit(CLEAN);
    await settle();
    expect(h.patches).toEqual([]);
    expect(h.lifts).toEqual([]);
    await advance(h, 1000);
    expect(h.lifts).toHaveLength(1);
    await advance(h, 9000);
    expect(h.patches.map((p) => p.status)).toEqual(['True']);
  });
});
