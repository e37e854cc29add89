import { describe, expect, it } from 'vitest';
import { shippedValidator } from '../../src/cli/commands/node/shipped-validator.js';
import { blockedOf } from '../../src/node-agent/blocked.js';
import { breakerCountOf } from '../../src/node-agent/breaker-count.js';
import { podViewOf } from '../../src/node-agent/pod-view.js';
import { crashLoopPod, type PodShape } from '../harness/kube-api/pods.js';

const IMAGE = 'registry.example/platform/mesh-interlock:1.2.3';
const FINISHED = '2026-11-20T10:00:24Z';
const INPUT = {
  trustedImages: ['registry.example/platform/mesh-interlock'],
  shipped: shippedValidator('linkerd'),
  windowMs: 60_000,
  now: 5_000_000,
  wallNow: Date.parse(FINISHED) + 10_000,
};

function count(shape: Partial<PodShape> = {}, input = INPUT) {
  const view = podViewOf(
    crashLoopPod({ name: 'p', image: IMAGE, finishedAt: FINISHED, ...shape }),
    'linkerd-network-validator',
  )!;
  return breakerCountOf(view, blockedOf(view, 95)!, input);
}

describe('breakerCountOf', () => {
  it("a trusted run of a controller's pod counts, at its finishedAt on the agent's clock", () => {
    expect(count()).toEqual({ counted: true, at: INPUT.now - 10_000 });
  });

  it('a run that finished a window ago or earlier does not count', () => {
    expect(count({}, { ...INPUT, wallNow: Date.parse(FINISHED) + 60_000 })).toEqual({ counted: false });
    expect(count({}, { ...INPUT, wallNow: Date.parse(FINISHED) + 59_999 })).toEqual({
      counted: true,
      at: INPUT.now - 59_999,
    });
  });

  it('a finishedAt ahead of the wall clock counts as now, not in the future', () => {
    expect(count({}, { ...INPUT, wallNow: Date.parse(FINISHED) - 5000 })).toEqual({ counted: true, at: INPUT.now });
  });

  it("a bare pod's failure does not count: the agent would not act on it", () => {
    expect(count({ bare: true })).toEqual({ counted: false });
  });

  it('a reason no recreation fixes does not count', () => {
    expect(count({ message: 'ZtunnelArrivalUnseen: a stranger accepted' })).toEqual({ counted: false });
  });

  it('an untrusted image does not count, and says why', () => {
    const untrusted = count({ image: 'docker.io/tenant/look-alike:1' });
    expect(untrusted.counted).toBe(false);
    expect(!untrusted.counted && untrusted.distrust).toMatch(/image/);
  });

  it('with no trusted images nothing counts', () => {
    expect(count({}, { ...INPUT, trustedImages: [] }).counted).toBe(false);
  });
});
