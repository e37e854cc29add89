import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { meshIdentities, meshIdentity, type Mesh } from '../../src/mesh/meshes.js';
import { SandboxEventSink, type SandboxSighting } from '../../src/node-agent/sandbox-events.js';
import { pluginFailureOf, SANDBOX_FAILED_REASON } from '../../src/node-agent/sandbox-failure.js';

interface Fixture {
  readonly source: string;
  readonly mesh: Mesh;
  readonly cause: string;
  readonly message: string;
}
const FIXTURES = (
  JSON.parse(readFileSync(new URL('../fixtures/kube/sandbox-events.json', import.meta.url), 'utf8')) as {
    events: Fixture[];
  }
).events;
const pluginOf = (mesh: Mesh): string => meshIdentity(mesh).cniPlugin!;

describe('pluginFailureOf: the mesh plugin named in a kubelet FailedCreatePodSandBox message', () => {
  it.each(FIXTURES.map((fixture) => [fixture.source, fixture] as const))('%s', (_source, fixture) => {
    const failure = pluginFailureOf(fixture.message, pluginOf(fixture.mesh));
    expect(failure?.cause).toBe(fixture.cause);
    // The detail is the plugin's own words, never the runtime's frame around them.
    expect(failure?.detail).not.toMatch(/Failed to create pod sandbox|failed to setup network/);
  });

  it("names no failure for another mesh's plugin: a message naming istio-cni is not linkerd-cni's", () => {
    const others = meshIdentities()
      .map((identity) => identity.cniPlugin)
      .filter((plugin): plugin is string => plugin !== undefined && plugin !== pluginOf('istio'));
    expect(others.length).toBeGreaterThan(0);
    for (const fixture of FIXTURES)
      for (const plugin of others) expect(pluginFailureOf(fixture.message, plugin)).toBeUndefined();
  });

  it('does not match a plugin whose name only contains the mesh plugin (type="x-istio-cni")', () => {
    const message = FIXTURES[0]!.message.replace('type="istio-cni"', 'type="x-istio-cni"');
    expect(pluginFailureOf(message, pluginOf('istio'))).toBeUndefined();
  });

  it('takes a plugin name as text, not as a pattern (a "." in it matches only a ".")', () => {
    expect(pluginFailureOf(FIXTURES[0]!.message, 'istio.cni')).toBeUndefined();
  });
});

describe('SandboxEventSink: new occurrences on this node from its kubelet only', () => {
  const plugin = pluginOf('istio');
  const event = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    metadata: { name: 'web-1.abc', namespace: 'shop', uid: 'ev-1' },
    involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-1' },
    reason: SANDBOX_FAILED_REASON,
    message: FIXTURES[0]!.message,
    type: 'Warning',
    source: { component: 'kubelet', host: 'node-a' },
    count: 1,
    lastTimestamp: '2026-11-28T10:00:00Z',
    ...overrides,
  });
  const sink = (seen: SandboxSighting[]) =>
    new SandboxEventSink(
      'node-a',
      plugin,
      (s) => seen.push(s),
      () => undefined,
    );

  it('counts an Event once, then only the increase of its count', () => {
    const seen: SandboxSighting[] = [];
    const events = sink(seen);
    events.relisted([event()]);
    expect(seen).toHaveLength(1);
    events.changed('MODIFIED', event());
    events.changed('MODIFIED', event({ count: 4, lastTimestamp: '2026-11-28T10:01:00Z' }));
    expect(seen.map((s) => s.occurrences)).toEqual([1, 3]);
    expect(seen[1]).toMatchObject({
      pod: 'shop/web-1',
      cause: 'tool-missing',
      atWallMs: Date.parse('2026-11-28T10:01:00Z'),
    });
  });

  it.each([
    ['another node', { source: { component: 'kubelet', host: 'node-b' } }],
    ['not the kubelet', { source: { component: 'tenant', host: 'node-a' } }],
    ['another reason', { reason: 'FailedMount' }],
    ['about a Node', { involvedObject: { kind: 'Node', name: 'node-a' } }],
    ['another plugin', { message: FIXTURES[0]!.message.replaceAll('istio-cni', 'calico') }],
    ['no time', { lastTimestamp: undefined }],
  ])('ignores an Event of %s', (_what, overrides) => {
    const seen: SandboxSighting[] = [];
    sink(seen).relisted([event(overrides)]);
    expect(seen).toEqual([]);
  });

  it('reads an Event written as events.k8s.io writes it (eventTime, reportingComponent and reportingInstance), count absent or 0 as one', () => {
    const seen: SandboxSighting[] = [];
    const events = sink(seen);
    const { source: _source, lastTimestamp: _last, count: _count, ...rest } = event();
    events.changed('ADDED', {
      ...rest,
      reportingComponent: 'kubelet',
      reportingInstance: 'node-a',
      eventTime: '2026-11-28T10:02:00.000000Z',
    });
    events.changed('ADDED', event({ metadata: { uid: 'ev-2' }, count: 0 }));
    expect(seen.map((s) => [s.occurrences, s.atWallMs])).toEqual([
      [1, Date.parse('2026-11-28T10:02:00Z')],
      [1, Date.parse('2026-11-28T10:00:00Z')],
    ]);
  });

  it('ignores an Event with no source, no involved object or no uid, without throwing', () => {
    const seen: SandboxSighting[] = [];
    const events = sink(seen);
    events.changed('ADDED', event({ source: undefined }));
    events.changed('ADDED', event({ involvedObject: undefined }));
    events.changed('ADDED', event({ metadata: {} }));
    events.changed('ADDED', null);
    expect(seen).toEqual([]);
  });

  it('forgets a deleted Event: the same uid listed again counts again', () => {
    const seen: SandboxSighting[] = [];
    const events = sink(seen);
    events.changed('ADDED', event());
    events.changed('DELETED', event());
    events.changed('ADDED', event());
    expect(seen).toHaveLength(2);
  });

  it('remembers a bounded number of Events: the oldest is forgotten first', () => {
    const seen: SandboxSighting[] = [];
    const events = sink(seen);
    for (let i = 0; i <= 2048; i++) events.changed('ADDED', event({ metadata: { uid: `ev-${i}` } }));
    events.changed('MODIFIED', event({ metadata: { uid: 'ev-2048' } }));
    events.changed('MODIFIED', event({ metadata: { uid: 'ev-0' } }));
    expect(seen).toHaveLength(2050);
  });
});
