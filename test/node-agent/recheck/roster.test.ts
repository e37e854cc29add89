import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { promRecheckMetrics } from '../../../src/node-agent/recheck/recheck-metrics.js';
import { RecheckRoster } from '../../../src/node-agent/recheck/roster.js';

const NODE = 'node-a';

function pod(uid: string, phase: string, extra: { labels?: Record<string, string>; node?: string } = {}) {
  return {
    metadata: { name: `p-${uid}`, namespace: 'tenant', uid, labels: extra.labels ?? {} },
    spec: {
      nodeName: extra.node ?? NODE,
      containers: [{ name: 'app' }, { name: 'linkerd-proxy' }],
      initContainers: [{ name: 'linkerd-network-validator' }],
    },
    status: { phase, podIP: '10.0.0.9' },
  };
}

describe('the re-check roster holds only running, meshed pods', () => {
  it('keeps every running pod beside 256 completed ones', () => {
    const roster = new RecheckRoster(NODE);
    const finished = Array.from({ length: 256 }, (_, i) => pod(`done-${i}`, i % 2 ? 'Succeeded' : 'Failed'));
    const running = Array.from({ length: 20 }, (_, i) => pod(`run-${i}`, 'Running'));
    roster.relisted([...finished, ...running]);
    expect(
      roster
        .snapshot()
        .map((entry) => entry.uid)
        .sort(),
    ).toEqual(running.map((p) => p.metadata.uid).sort());
    expect(roster.overflow).toBe(0);
    for (const p of finished) roster.changed('ADDED', p);
    roster.changed('ADDED', pod('late', 'Running'));
    expect(roster.snapshot()).toHaveLength(21);
  });

  it('lets a pod go when it finishes, freeing its slot', () => {
    const roster = new RecheckRoster(NODE);
    roster.changed('ADDED', pod('a', 'Running'));
    roster.changed('MODIFIED', pod('a', 'Succeeded'));
    expect(roster.snapshot()).toEqual([]);
  });

  it('keeps no pod that opts out of ambient and has no sidecar', () => {
    const roster = new RecheckRoster(NODE);
    const plain = pod('x', 'Running', { labels: { 'istio.io/dataplane-mode': 'none' } });
    plain.spec.containers = [{ name: 'app' }];
    plain.spec.initContainers = [];
    roster.changed('ADDED', plain);
    expect(roster.snapshot()).toEqual([]);
  });

  it('counts the running pods past the cap, and forgets them when they go', () => {
    const roster = new RecheckRoster(NODE);
    roster.relisted(Array.from({ length: 260 }, (_, i) => pod(`r-${i}`, 'Running')));
    expect(roster.snapshot()).toHaveLength(256);
    expect(roster.overflow).toBe(4);
    roster.changed('MODIFIED', pod('r-259', 'Running'));
    expect(roster.overflow).toBe(4);
    roster.changed('DELETED', pod('r-259', 'Running'));
    expect(roster.overflow).toBe(3);
  });

  it('reports the overflow as a gauge', async () => {
    const registry = new Registry();
    const metrics = promRecheckMetrics(registry);
    metrics.rosterOverflow(7);
    expect(await registry.metrics()).toMatch(/^interlock_node_recheck_roster_overflow_pods 7$/m);
  });
});
