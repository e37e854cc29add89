import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { admit } from '../../src/webhook/admit.js';
import type { PatchSettings } from '../../src/webhook/validator-patch.js';
import { webhookBudget } from '../../src/webhook/webhook-budget.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';

const SETTINGS: PatchSettings = { image: 'registry.example/interlock:1.0.0', annotations: { 'interlock.dev/t': 'y' } };
const SHAPE = webhookBudget(3 * 1024 * 1024).shape;
const linkerd = meshPods().find((p) => p.mesh === 'linkerd' && p.validator)!;

type Json = Record<string, ReturnType<typeof JSON.parse>>;

const applyOps = (pod: unknown, ops: readonly unknown[]): Json =>
  fastJsonPatch.applyPatch(structuredClone(pod), ops as fastJsonPatch.Operation[], true, false).newDocument as Json;

/** The Linkerd pod with `mutate` applied to its validator container. */
function withValidator(mutate: (validator: Json) => void): Json {
  const pod = structuredClone(linkerd.pod) as Json;
  mutate((pod.spec.initContainers as Json[]).find((c) => c.name === linkerd.validator)!);
  return pod;
}

const patchOps = (body: string) => {
  const patch = admit(body, SETTINGS, 'allow', SHAPE).response.response.patch;
  return patch ? (JSON.parse(Buffer.from(patch, 'base64').toString()) as Json[]) : [];
};

describe('hostile AdmissionReviews: an answer, never a throw', () => {
  it('an env value nesting 5,000 arrays (10 KB) is refused before it is parsed', () => {
    const deep = withValidator((v) => {
      v.env = [{ name: 'X', value: 'placeholder' }];
    });
    const body = admissionReview(deep, 'u-deep').replace('"placeholder"', `${'['.repeat(5000)}${']'.repeat(5000)}`);
    expect(body.length - admissionReview(deep, 'u-deep').length).toBeLessThan(10_010);
    const admission = admit(body, SETTINGS, 'allow', SHAPE);
    expect(admission.response.response).toMatchObject({ uid: 'u-deep', allowed: true });
    expect(admission.outcome).toBe('invalid');
    expect(admission.message).toMatch(/nests deeper than \d+/);
  });

  it('a body of a million empty objects is refused by its token count, not parsed', () => {
    const body = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-wide","object":[${'{},'.repeat(1_000_000)}{}]}}`;
    const admission = admit(body, SETTINGS, 'deny', SHAPE);
    expect(admission.response.response).toMatchObject({ uid: 'u-wide', allowed: false });
    expect(admission.message).toMatch(/more than \d+ JSON values/);
  });

  it('brackets inside strings do not count toward depth', () => {
    const pod = withValidator((v) => {
      v.env = [{ name: 'X', value: `${'['.repeat(5000)}"\\` }];
    });
    expect(admit(admissionReview(pod, 'u-str'), SETTINGS, 'allow', SHAPE).outcome).toBe('patched');
  });
});

describe('the patch only adds what Interlock adds', () => {
  it('never re-sends the pod’s env or volumeMounts: each entry is an `add …/-`', () => {
    const pod = withValidator((v) => {
      v.env = [{ name: 'MESH_OWN', value: 'x'.repeat(1000) }];
      v.volumeMounts = [{ name: 'mine', mountPath: '/mine' }];
    });
    const ops = patchOps(admissionReview(pod, 'u-add'));
    const text = JSON.stringify(ops);
    expect(text).not.toContain('MESH_OWN');
    expect(text).not.toContain('/mine');
    const listOps = ops.filter((op) => /\/(env|volumeMounts)(\/|$)/.test(op.path as string));
    expect(listOps.length).toBeGreaterThan(0);
    for (const op of listOps) expect(op).toMatchObject({ op: 'add', path: expect.stringMatching(/\/-$/) });
    const patched = applyOps(pod, ops);
    const validator = (patched.spec.initContainers as Json[]).find((c) => c.name === linkerd.validator)!;
    expect((validator.env as Json[]).map((e) => e.name)).toEqual([
      'MESH_OWN',
      'POD_NAME',
      'POD_NAMESPACE',
      'POD_UID',
      'INTERLOCK_POD_ANNOTATIONS',
      'INTERLOCK_POD_LABELS',
    ]);
    expect((validator.volumeMounts as Json[]).map((m) => m.name)).toEqual(['mine', 'interlock-podinfo']);
  });

  it('a pod of 300 validator-named init containers patches one; 3,000 are refused unparsed', () => {
    const many = (count: number) => {
      const pod = structuredClone(linkerd.pod) as Json;
      const validator = (pod.spec.initContainers as Json[]).find((c) => c.name === linkerd.validator)!;
      pod.spec.initContainers = Array.from({ length: count }, () => validator);
      return admissionReview(pod, `u-${count}`);
    };
    const ops = patchOps(many(300));
    const touched = new Set(ops.map((op) => /^\/spec\/initContainers\/(\d+)\//.exec(op.path as string)?.[1]));
    touched.delete(undefined);
    expect([...touched]).toEqual(['0']);
    const refused = admit(many(3000), SETTINGS, 'allow', SHAPE);
    expect(refused).toMatchObject({ outcome: 'invalid', cause: 'too-complex' });
    expect(refused.response.response.uid).toBe('u-3000');
  });
});
