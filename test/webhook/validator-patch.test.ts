import { memoryLimitNote } from '../../src/inject/resources.js';
import fastJsonPatch from 'fast-json-patch';
import { Pod } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { meshIdentity } from '../../src/mesh/meshes.js';
import { podPatch, type PatchSettings } from '../../src/webhook/validator-patch.js';
import { meshPods } from '../../scripts/mesh-pods.mjs';

const SETTINGS: PatchSettings = {
  image: 'registry.example/interlock:1.0.0',
  annotations: { 'interlock.dev/test': 'yes' },
};
const pods = meshPods();
const withValidator = pods.filter((pod) => pod.validator);
const withoutValidator = pods.filter((pod) => !pod.validator);

/** Parsed JSON, read loosely. */
type Json = Record<string, ReturnType<typeof JSON.parse>>;

export function applyOps(pod: unknown, ops: readonly unknown[]): Json {
  return fastJsonPatch.applyPatch(structuredClone(pod), ops as fastJsonPatch.Operation[], true, false)
    .newDocument as Json;
}

/** What the API server hands the next webhook: defaults filled in and keys in Go struct order (here: reversed). */
function roundTrip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(roundTrip);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Json)
    .reverse()
    .map(([key, item]) => [key, roundTrip(item)] as const);
  const out: Json = Object.fromEntries(entries);
  if ('fieldPath' in out && !('apiVersion' in out)) out.apiVersion = 'v1';
  if ('items' in out && Array.isArray(out.items) && !('defaultMode' in out)) out.defaultMode = 420;
  return out;
}

describe('the validator patch over the meshes’ rendered pods', () => {
  it('has fixtures of both meshes, several versions each, with and without a validator', () => {
    expect(
      new Set(withValidator.filter((p) => p.mesh === 'linkerd').map((p) => p.id.split('/')[1])).size,
    ).toBeGreaterThanOrEqual(5);
    expect(
      new Set(withValidator.filter((p) => p.mesh === 'istio').map((p) => p.id.split('/')[1])).size,
    ).toBeGreaterThanOrEqual(5);
    expect(withoutValidator.length).toBeGreaterThan(0);
  });

  it('a mesh memory limit under Interlock’s measured peak is raised, and the patch says so', () => {
    const limitOf = (pod: unknown, name: string) =>
      (((pod as Json).spec.initContainers as Json[]).find((c) => c.name === name)?.resources?.limits?.memory ??
        undefined) as string | undefined;
    const low = withValidator.filter((p) => limitOf(p.pod, p.validator!) === '20Mi');
    // Linkerd stable-2.14 and edge-24.5 inject the validator with a 20Mi limit.
    expect(low.map((p) => p.id.split('/')[1])).toEqual(expect.arrayContaining(['stable-2.14.0', 'edge-24.5.4']));
    for (const fixture of withValidator) {
      const { ops, warnings } = podPatch(fixture.pod, SETTINGS);
      const raised = limitOf(applyOps(fixture.pod, ops), fixture.validator!);
      expect(raised, fixture.id).toBe('128Mi');
      if (low.includes(fixture)) expect(warnings, fixture.id).toEqual([memoryLimitNote(fixture.validator!, '20Mi')]);
      else expect(warnings, fixture.id).toEqual([]);
    }
  });

  it.each(withValidator.map((p) => [p.id, p] as const))(
    '%s: Interlock runs in the validator’s place, the rest is kept',
    (_id, fixture) => {
      const { ops } = podPatch(fixture.pod, SETTINGS);
      expect(ops.length).toBeGreaterThan(0);
      const mutated = applyOps(fixture.pod, ops);
      new Pod(mutated as never).validate();
      const before = (fixture.pod.spec as Json).initContainers as Json[];
      const after = mutated.spec.initContainers as Json[];
      const index = before.findIndex((c) => c.name === fixture.validator);
      expect(after.map((c) => c.name)).toEqual(before.map((c) => c.name));
      const old = before[index]!;
      const now = after[index]!;
      expect(now.image).toBe(SETTINGS.image);
      expect(now.command).toEqual(meshIdentity(fixture.mesh).dropIn?.command);
      expect(now.args).toEqual(old.args);
      expect(now.securityContext).toEqual(old.securityContext);
      expect(now.terminationMessagePolicy).toBe('FallbackToLogsOnError');
      expect(now.resources).toEqual({ requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } });
      expect(now.env.map((e: Json) => e.name)).toEqual(
        expect.arrayContaining([
          'POD_NAME',
          'POD_NAMESPACE',
          'POD_UID',
          'INTERLOCK_POD_ANNOTATIONS',
          'INTERLOCK_POD_LABELS',
        ]),
      );
      for (const kept of old.env ?? []) expect(now.env).toContainEqual(kept);
      expect(now.volumeMounts).toContainEqual({
        name: 'interlock-podinfo',
        mountPath: '/etc/interlock/podinfo',
        readOnly: true,
      });
      expect(mutated.spec.volumes.filter((v: Json) => v.name === 'interlock-podinfo')).toHaveLength(1);
      expect(mutated.metadata.annotations['interlock.dev/test']).toBe('yes');
      // Nothing else of the pod moved.
      expect(mutated.spec.containers).toEqual((fixture.pod.spec as Json).containers);
      expect(after.filter((_c, i) => i !== index)).toEqual(before.filter((_c, i) => i !== index));
    },
  );

  it.each(withValidator.map((p) => [p.id, p] as const))(
    '%s: reinvoked, even after the API server’s round trip, it patches nothing',
    (_id, fixture) => {
      const mutated = applyOps(fixture.pod, podPatch(fixture.pod, SETTINGS).ops);
      expect(podPatch(mutated, SETTINGS).ops).toEqual([]);
      expect(podPatch(roundTrip(mutated), SETTINGS).ops).toEqual([]);
    },
  );

  it.each(withValidator.map((p) => [p.id, p] as const))(
    "%s: the patched validator stays inside the node agent's trust boundary (docs/node-agent.md)",
    (_id, fixture) => {
      const mutated = applyOps(fixture.pod, podPatch(fixture.pod, SETTINGS).ops);
      const now = (mutated.spec.initContainers as Json[]).find((c) => c.name === fixture.validator)!;
      // The image as shipped: no command (its entrypoint), or Linkerd's path (its shim).
      expect([undefined, '["/usr/lib/linkerd/linkerd2-network-validator"]']).toContain(
        now.command && JSON.stringify(now.command),
      );
      for (const entry of now.env as Json[])
        expect(entry.name).toMatch(
          /^(INTERLOCK_.*|POD_NAME|POD_NAMESPACE|POD_UID|NODE_NAME|KUBERNETES_SERVICE_(HOST|PORT))$/,
        );
      for (const mount of now.volumeMounts as Json[])
        expect(['/var/run/secrets/kubernetes.io/serviceaccount', '/etc/interlock/podinfo']).toContain(mount.mountPath);
      expect(now.envFrom).toBeUndefined();
      expect(now.lifecycle).toBeUndefined();
    },
  );

  it.each(withoutValidator.map((p) => [p.id, p] as const))(
    '%s: a pod without a mesh validator is not patched',
    (_id, fixture) => {
      expect(podPatch(fixture.pod, SETTINGS)).toEqual({ ops: [], containers: [], warnings: [] });
    },
  );
});

describe('what the patch refuses to touch', () => {
  const linkerd = withValidator.find((p) => p.mesh === 'linkerd')!;

  it("leaves a validator whose argv is neither mesh's (Interlock's own `--mesh` args) alone", () => {
    const pod = structuredClone(linkerd.pod) as Json;
    const validator = pod.spec.initContainers.find((c: Json) => c.name === 'linkerd-network-validator');
    delete validator.command;
    validator.args = ['--mesh', 'linkerd'];
    const result = podPatch(pod, SETTINGS);
    expect(result.ops).toEqual([]);
    expect(result.containers).toEqual([expect.objectContaining({ outcome: 'unrecognised' })]);
  });

  it('leaves a container named like Istio’s validator but running Linkerd’s argv alone', () => {
    const pod = structuredClone(linkerd.pod) as Json;
    pod.spec.initContainers.find((c: Json) => c.name === 'linkerd-network-validator').name = 'istio-validation';
    expect(podPatch(pod, SETTINGS).ops).toEqual([]);
  });

  it('guards the container index with a test op, so a list that moved makes the API server reject the patch', () => {
    const { ops } = podPatch(linkerd.pod, SETTINGS);
    const shifted = structuredClone(linkerd.pod) as Json;
    shifted.spec.initContainers.unshift({ name: 'first', image: 'busybox' });
    expect(() => applyOps(shifted, ops)).toThrow(/test/i);
  });

  it('escapes an annotation key with a slash as one path segment', () => {
    const pod = structuredClone(linkerd.pod) as Json;
    pod.metadata.annotations = { other: 'x' };
    const mutated = applyOps(pod, podPatch(pod, SETTINGS).ops);
    expect(mutated.metadata.annotations).toEqual({ other: 'x', 'interlock.dev/test': 'yes' });
  });

  it('ignores garbage in place of a pod', () => {
    for (const garbage of [
      null,
      42,
      'pod',
      [],
      { spec: { initContainers: 'x' } },
      { spec: { initContainers: [null, 7] } },
    ])
      expect(podPatch(garbage, SETTINGS).ops).toEqual([]);
  });
});
