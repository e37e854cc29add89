import { describe, expect, it } from 'vitest';
import { backoffVerdict, recordRecreation, type BackoffPolicy } from '../../src/node-agent/backoff.js';
import { blockedOf } from '../../src/node-agent/blocked.js';
import { CLOSED_BREAKER, recordAudit, recordBlocked, tick } from '../../src/node-agent/breaker.js';
import { CoalescingQueue } from '../../src/node-agent/coalescing-queue.js';
import { decide, type DecisionInput } from '../../src/node-agent/decide.js';
import { ownerOf, podViewOf } from '../../src/node-agent/pod-view.js';
import { RateLimiter } from '../../src/node-agent/rate-limiter.js';
import { parseRetryAfter, retryDelayMs } from '../../src/node-agent/retry-delay.js';
import { crashLoopPod, failedJobPod, healthyPod, type FixturePod } from '../harness/kube-api/pods.js';

const C = 'linkerd-network-validator';
const withMeta = (pod: FixturePod): FixturePod => ({
  ...pod,
  metadata: { ...pod.metadata, uid: 'u1', resourceVersion: '7' },
});

describe('pod view and blocked (kubelet-shaped fixtures)', () => {
  it('reads lastState.terminated of a CrashLoopBackOff validator', () => {
    const view = podViewOf(withMeta(crashLoopPod({ name: 'a' })), C)!;
    expect(view).toMatchObject({
      key: 'default/a',
      uid: 'u1',
      ownerKind: 'ReplicaSet',
      restartPolicy: 'Always',
      validator: { exitCode: 95 },
    });
    expect(blockedOf(view, 95)).toMatchObject({ reason: 'PodNetworkMissing', recreatable: true });
  });

  it('reads state.terminated of a Job pod that never restarts', () => {
    const view = podViewOf(withMeta(failedJobPod({ name: 'j' })), C)!;
    expect(view.ownerKind).toBe('Job');
    expect(blockedOf(view, 95)).toMatchObject({ reason: 'InterceptionMissing', recreatable: true });
  });

  it('is not blocked on another exit code, a pass, another container name, or a pass after failures', () => {
    expect(blockedOf(podViewOf(withMeta(crashLoopPod({ name: 'a' })), C)!, 126)).toBeUndefined();
    expect(blockedOf(podViewOf(withMeta(healthyPod({ name: 'a' })), C)!, 95)).toBeUndefined();
    expect(podViewOf(withMeta(crashLoopPod({ name: 'a' })), 'istio-validation')).toBeUndefined();
    const passedAfterFailure = withMeta(crashLoopPod({ name: 'a' }));
    passedAfterFailure.status.initContainerStatuses[0]!.state = {
      terminated: { exitCode: 0, reason: 'Completed', finishedAt: '2026-11-20T10:01:00Z' },
    };
    expect(blockedOf(podViewOf(passedAfterFailure, C)!, 95)).toBeUndefined();
  });

  it('keeps the same run id when a run moves from state to lastState on restart', () => {
    const job = withMeta(failedJobPod({ name: 'j' }));
    const before = podViewOf(job, C)!.validator!.runId;
    const status = job.status.initContainerStatuses[0]!;
    status.lastState = status.state;
    status.state = { waiting: { reason: 'CrashLoopBackOff' } };
    expect(podViewOf(job, C)!.validator!.runId).toBe(before);
  });

  it('takes the first word as reason; a message without one is Unknown and only reported', () => {
    const view = podViewOf(
      withMeta(crashLoopPod({ name: 'a', message: 'ConfigInvalid: --inbound-port: expected 1-65535' })),
      C,
    )!;
    expect(blockedOf(view, 95)).toMatchObject({ reason: 'ConfigInvalid', recreatable: false });
    const garbage = podViewOf(withMeta(crashLoopPod({ name: 'a', message: '  {"level":50}' })), C)!;
    expect(blockedOf(garbage, 95)).toMatchObject({ reason: 'Unknown', recreatable: false });
  });
});

const POLICY: BackoffPolicy = { baseMs: 1000, maxMs: 8000, maxRecreations: 3, windowMs: 60_000 };

describe('decide', () => {
  const input = (over: Partial<DecisionInput> = {}): DecisionInput => {
    const view = podViewOf(withMeta(crashLoopPod({ name: 'a' })), C)!;
    return {
      view,
      blocked: blockedOf(view, 95)!,
      action: 'delete',
      breakerOpen: false,
      backoff: new Map(),
      policy: POLICY,
      now: 100_000,
      ...over,
    };
  };

  it('recreates CNI failures, reports the rest, and holds while the breaker is open', () => {
    expect(decide(input())).toMatchObject({ kind: 'recreate', how: 'delete', event: 'InterlockRecreating' });
    expect(decide(input({ action: 'label' }))).toMatchObject({ kind: 'recreate', how: 'label' });
    expect(decide(input({ action: 'none' }))).toMatchObject({ kind: 'report', event: 'InterlockBlocked' });
    expect(decide(input({ breakerOpen: true }))).toMatchObject({ kind: 'hold', event: 'InterlockHeld' });
    const base = input();
    expect(
      decide({ ...base, blocked: { ...base.blocked, reason: 'NothingToProbe', recreatable: false } }),
    ).toMatchObject({ kind: 'report' });
  });

  it('never deletes a pod no controller would recreate: a bare pod or a static (mirror) pod is only reported', () => {
    const bare = withMeta(crashLoopPod({ name: 'bare' }));
    delete bare.metadata.ownerReferences;
    const bareView = podViewOf(bare, C)!;
    expect(decide(input({ view: bareView, blocked: blockedOf(bareView, 95)! }))).toMatchObject({
      kind: 'report',
      event: 'InterlockBlocked',
    });
    const mirror = withMeta(crashLoopPod({ name: 'static-node-a' }));
    mirror.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'n1', controller: true }];
    const mirrorView = podViewOf(mirror, C)!;
    expect(decide(input({ view: mirrorView, blocked: blockedOf(mirrorView, 95)! }))).toMatchObject({ kind: 'report' });
    expect(decide(input({ view: bareView, blocked: blockedOf(bareView, 95)!, action: 'label' }))).toMatchObject({
      kind: 'recreate',
      how: 'label',
    });
  });

  it('says a Job pod deletion counts against backoffLimit', () => {
    const view = podViewOf(withMeta(failedJobPod({ name: 'j' })), C)!;
    const decision = decide(input({ view, blocked: blockedOf(view, 95)! }));
    expect(decision.kind === 'recreate' && decision.note).toMatch(/backoffLimit/);
  });

  it('backs off exponentially per owner and gives up after the cap within the window', () => {
    // Keyed by namespace and controller uid: a uid written into another namespace's pod is another owner.
    const owner = ownerOf(input().view).owner;
    expect(owner).toBe(`${input().view.namespace}/${input().view.ownerUid}`);
    let state = recordRecreation(new Map(), owner, POLICY, 0);
    expect(decide(input({ backoff: state, now: 500 }))).toEqual({ kind: 'wait', untilMs: 1000 });
    expect(decide(input({ backoff: state, now: 1000 })).kind).toBe('recreate');
    state = recordRecreation(state, owner, POLICY, 1000);
    expect(backoffVerdict(state, owner, POLICY, 2500)).toEqual({ kind: 'wait', untilMs: 3000 });
    state = recordRecreation(state, owner, POLICY, 3000);
    expect(decide(input({ backoff: state, now: 50_000 }))).toMatchObject({
      kind: 'report',
      event: 'InterlockRecreateLimit',
    });
    expect(decide(input({ backoff: state, now: 60_001 })).kind).toBe('recreate');
  });
});

describe('breaker', () => {
  const policy = { threshold: 5, windowMs: 60_000, minNamespaces: 2 };
  /** The i-th distinct owner, spread over two namespaces. */
  const owner = (i: number) => ({ namespace: `ns-${i % 2}`, owner: `ns-${i % 2}/rs-${i}` });
  it('opens on the sixth blocked owner within a window, not on five or on spread-out ones', () => {
    let state = CLOSED_BREAKER;
    for (let i = 0; i < 5; i++) state = recordBlocked(state, policy, owner(i), i * 100).state;
    expect(state.open).toBe(false);
    expect(recordBlocked(state, policy, owner(5), 600).transition).toBe('opened');
    let spread = CLOSED_BREAKER;
    for (let i = 0; i < 10; i++) spread = recordBlocked(spread, policy, owner(i), i * 20_000).state;
    expect(spread.open).toBe(false);
  });

  // Issue 35, item 8: one tenant must not open the breaker for everyone.
  it('one owner failing again and again is one owner: it never opens the breaker', () => {
    let state = CLOSED_BREAKER;
    for (let i = 0; i < 50; i++) state = recordBlocked(state, policy, owner(0), i * 100).state;
    expect(state.open).toBe(false);
  });

  it('many owners of one namespace do not open it; the same count over two namespaces does', () => {
    let state = CLOSED_BREAKER;
    for (let i = 0; i < 20; i++)
      state = recordBlocked(state, policy, { namespace: 'tenant', owner: `tenant/rs-${i}` }, i * 10).state;
    expect(state.open).toBe(false);
    expect(recordBlocked(state, policy, { namespace: 'other', owner: 'other/rs-0' }, 300).transition).toBe('opened');
    let single = CLOSED_BREAKER;
    const one = { ...policy, minNamespaces: 1 };
    for (let i = 0; i < 6; i++)
      single = recordBlocked(single, one, { namespace: 'apps', owner: `apps/rs-${i}` }, i * 10).state;
    expect(single.open).toBe(true);
  });

  it('closes only after a full quiet window; a new blocked pod restarts the wait', () => {
    let state = CLOSED_BREAKER;
    for (let i = 0; i < 6; i++) state = recordBlocked(state, policy, owner(i), 0).state;
    expect(state.open).toBe(true);
    expect(tick(state, policy, 59_999).transition).toBeUndefined();
    state = recordBlocked(state, policy, owner(0), 30_000).state;
    expect(tick(state, policy, 60_000).transition).toBeUndefined();
    expect(tick(state, policy, 90_000).transition).toBe('closed');
  });

  it('an unhealthy CNI audit alone is a prediction: it never opens the breaker, however long', () => {
    let state = recordAudit(CLOSED_BREAKER, policy, false, 0);
    expect(state.transition).toBeUndefined();
    expect(state.state.open).toBe(false);
    state = recordAudit(state.state, policy, false, 600_000);
    expect(state.state.open).toBe(false);
    expect(tick(state.state, policy, 1_200_000).state.open).toBe(false);
  });

  it('an unhealthy audit with one validator failure on the node in the window opens it, in either order', () => {
    // The failure first, then the audit.
    let failed = recordBlocked(CLOSED_BREAKER, policy, owner(0), 10_000);
    expect(failed.transition).toBeUndefined();
    failed = recordAudit(failed.state, policy, false, 69_999);
    expect(failed.transition).toBe('opened');
    // The audit first, then the failure, however long the audit has been failing.
    let audited = recordAudit(CLOSED_BREAKER, policy, false, 0);
    audited = recordBlocked(audited.state, policy, owner(0), 500_000);
    expect(audited.transition).toBe('opened');
    // Kept open until the audit is healthy for a window and no failure within it.
    audited = recordAudit(audited.state, policy, true, 520_000);
    expect(tick(audited.state, policy, 579_999).transition).toBeUndefined();
    expect(tick(audited.state, policy, 580_000).transition).toBe('closed');
  });

  it('a failure older than the window does not confirm the audit; a healthy audit confirms nothing', () => {
    let stale = recordBlocked(CLOSED_BREAKER, policy, owner(0), 0);
    stale = recordAudit(stale.state, policy, false, 60_000);
    expect(stale.transition).toBeUndefined();
    // A failure reported late, whose run ended before the window, does not either.
    stale = recordBlocked(stale.state, policy, owner(1), 200_000, 139_000);
    expect(stale.state.open).toBe(false);
    let healthy = recordAudit(CLOSED_BREAKER, policy, true, 0);
    healthy = recordBlocked(healthy.state, policy, owner(0), 1000);
    expect(healthy.state.open).toBe(false);
  });

  it('without an unhealthy audit, failures keep their own rule (more than threshold owners)', () => {
    let state = recordAudit(CLOSED_BREAKER, policy, true, 0).state;
    for (let i = 0; i < 5; i++) state = recordBlocked(state, policy, owner(i), 1000).state;
    expect(state.open).toBe(false);
    expect(recordBlocked(state, policy, owner(5), 1000).transition).toBe('opened');
  });
});

describe('queue, rate limiter, retry delay', () => {
  it('coalesces by key, keeps order, refuses and remembers when full', () => {
    const queue = new CoalescingQueue<number>(2);
    expect(queue.offer('a', 1)).toBe('queued');
    expect(queue.offer('b', 1)).toBe('queued');
    expect(queue.offer('a', 2)).toBe('coalesced');
    expect(queue.offer('c', 1)).toBe('full');
    expect(queue.take()).toEqual(['a', 2]);
    expect(queue.takeOverflow()).toBe(true);
    expect(queue.takeOverflow()).toBe(false);
  });

  it('rate-limits to a burst then a steady rate', () => {
    const limiter = new RateLimiter(2, 3, 0);
    expect([limiter.tryTake(0), limiter.tryTake(0), limiter.tryTake(0)]).toEqual([0, 0, 0]);
    expect(limiter.tryTake(0)).toBe(500);
    expect(limiter.tryTake(500)).toBe(0);
  });

  it('honours Retry-After and grows exponentially with jitter otherwise', () => {
    const policy = { baseMs: 500, maxMs: 30_000 };
    expect(retryDelayMs(0, 3, policy, () => 0.5)).toBe(3000);
    expect([0, 1, 2, 10].map((attempt) => retryDelayMs(attempt, undefined, policy, () => 1))).toEqual([
      500, 1000, 2000, 30_000,
    ]);
    expect(retryDelayMs(3, undefined, policy, () => 0)).toBe(2000);
    expect(parseRetryAfter('7', 0)).toBe(7);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});
