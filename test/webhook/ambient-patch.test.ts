import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { admit } from '../../src/webhook/admit.js';
import type { PatchSettings } from '../../src/webhook/validator-patch.js';
import { webhookBudget } from '../../src/webhook/webhook-budget.js';
import { admissionReview } from '../../scripts/mesh-pods.mjs';
import { prng } from '../harness/prng.js';

const SETTINGS: PatchSettings = { image: 'registry.example/interlock:1.0.0', annotations: {} };
const SHAPE = webhookBudget(3 * 1024 * 1024).shape;
const NAME = 'istio-ambient-validation';
type Json = Record<string, unknown>;

/** A value of any JSON shape, where a pod field is expected. */
function junk(random: () => number): unknown {
  const pick = Math.floor(random() * 8);
  return [null, 7, 'x', true, [], {}, [{ name: NAME }], { name: NAME }][pick];
}

/** A pod with some of its fields replaced by junk of another shape, or its validator named twice. */
function mangledPod(random: () => number): Json {
  const pod: Json = {
    metadata: { labels: { app: 'web' }, annotations: {} },
    spec: {
      initContainers: [{ name: 'migrate', image: 'm:1' }],
      containers: [{ name: 'web', image: 'w:1' }],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
  const spec = pod.spec as Json;
  const metadata = pod.metadata as Json;
  const targets: Array<[Json, string]> = [
    [spec, 'initContainers'],
    [spec, 'containers'],
    [spec, 'volumes'],
    [metadata, 'labels'],
    [metadata, 'annotations'],
    [pod, 'metadata'],
  ];
  for (const [object, key] of targets) if (random() < 0.25) object[key] = junk(random);
  if (random() < 0.2) pod.spec = junk(random);
  if (random() < 0.2 && Array.isArray(spec.initContainers))
    (spec.initContainers as unknown[]).push({ name: NAME, image: 'busybox', command: ['true'] });
  return pod;
}

describe('the ambient path on hostile pods: an answer, never a throw, and a patch that applies', () => {
  it('2,000 mangled pods: each decision is allowed or denied; every patch applies and leaves one validator of Interlock', () => {
    const random = prng(33);
    let patched = 0;
    for (let i = 0; i < 2000; i++) {
      const pod = mangledPod(random);
      const admission = admit(admissionReview(pod, `u${i}`), SETTINGS, 'allow', SHAPE, 'ambient');
      expect(['patched', 'unchanged', 'skipped', 'denied', 'invalid']).toContain(admission.outcome);
      const patch = admission.response.response.patch;
      if (!patch) continue;
      const ops = JSON.parse(Buffer.from(patch, 'base64').toString()) as fastJsonPatch.Operation[];
      const result = fastJsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument as Json;
      const inits = (result.spec as Json).initContainers as Json[];
      const ours = inits.filter((item) => item.name === NAME);
      expect(ours.length, JSON.stringify(pod)).toBeGreaterThanOrEqual(1);
      expect(ours[0]).toMatchObject({ image: SETTINGS.image });
      expect(ours[0]!.command).toBeUndefined();
      patched++;
    }
    // The seed reaches both sides: most mangled pods still get a patch, some are refused.
    expect(patched).toBeGreaterThan(500);
  });
});
