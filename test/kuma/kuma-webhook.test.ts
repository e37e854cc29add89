import { readFileSync } from 'node:fs';
import path from 'node:path';
import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { compatToValidate } from '../../src/compat/compat-argv.js';
import { meshIdentity } from '../../src/mesh/meshes.js';
import { podPatch } from '../../src/webhook/validator-patch.js';

/** Kuma's injector golden with kuma-validation (inject.34, CNI mode, `kuma.io/init-first: "true"`). */
const GOLDEN = path.resolve(import.meta.dirname, '../fixtures/meshes/kuma/2.14.3/injector/inject.34.golden.yaml');
type Json = Record<string, ReturnType<typeof JSON.parse>>;
const golden = parseYaml(readFileSync(GOLDEN, 'utf8')) as { spec: { initContainers: Json[] } };
const VALIDATOR = meshIdentity('kuma').containers.validator;
const SETTINGS = { image: 'registry.example/interlock:1.0.0', annotations: {} };

/**
 * The same pod without `kuma.io/init-first` and without native sidecars: Kuma's injector then
 * appends kuma-validation after the pod's own init containers (injector.go, `appendInitContainers`).
 */
function appended(): Json {
  const pod = structuredClone(golden) as Json;
  const inits = pod.spec.initContainers as Json[];
  const validator = inits.find((container) => container.name === VALIDATOR);
  pod.spec.initContainers = [...inits.filter((container) => container !== validator), validator];
  return pod;
}

const apply = (pod: unknown, ops: readonly unknown[]) =>
  fastJsonPatch.applyPatch(structuredClone(pod), ops as fastJsonPatch.Operation[], true, false).newDocument as Json;

describe('the webhook stands in for kuma-validation and runs it first', () => {
  it('patches the golden as Kuma rendered it (validator already first): image and command, order kept', () => {
    const patch = podPatch(golden, SETTINGS);
    expect(patch.containers.map((decision) => decision.outcome)).toEqual(['patched']);
    const after = apply(golden, patch.ops).spec.initContainers as Json[];
    expect(after.map((container) => container.name)).toEqual(golden.spec.initContainers.map((c) => c.name));
    const validator = after[0] as Json;
    expect(validator.image).toBe(SETTINGS.image);
    expect(validator.command).toEqual(meshIdentity('kuma').dropIn?.command);
    const argv = ['kumactl', ...(validator.command as string[]).slice(1), ...(validator.args as string[])];
    expect(compatToValidate(argv, {})?.ok).toBe(true);
  });

  it("moves kuma-validation ahead of the application's init containers when Kuma appended it", () => {
    const pod = appended();
    expect((pod.spec.initContainers as Json[]).at(-1)?.name).toBe(VALIDATOR);
    const after = apply(pod, podPatch(pod, SETTINGS).ops).spec.initContainers as Json[];
    expect(after.map((container) => container.name)).toEqual([VALIDATOR, 'init']);
    expect(after[0]?.image).toBe(SETTINGS.image);
    // Applied again (the API server may call the webhook twice), nothing moves or changes.
    expect(podPatch(apply(pod, podPatch(pod, SETTINGS).ops), SETTINGS).ops).toEqual([]);
  });

  it('with native sidecars (the sidecar-feature golden) keeps kuma-validation first, before kuma-sidecar', () => {
    const native = parseYaml(readFileSync(GOLDEN.replace('inject.34.', 'inject.sidecar-feature.34.'), 'utf8')) as Json;
    const names = (pod: Json) => (pod.spec.initContainers as Json[]).map((container) => container.name as string);
    expect(names(native)).toEqual([VALIDATOR, meshIdentity('kuma').containers.proxy, 'init']);
    const patch = podPatch(native, SETTINGS);
    expect(patch.containers.map((decision) => decision.outcome)).toEqual(['patched']);
    const after = apply(native, patch.ops);
    expect(names(after)).toEqual(names(native));
    const validator = (after.spec.initContainers as Json[])[0] as Json;
    expect(validator.image).toBe(SETTINGS.image);
    const argv = ['kumactl', ...(validator.command as string[]).slice(1), ...(validator.args as string[])];
    expect(compatToValidate(argv, {})?.ok).toBe(true);
  });

  it('leaves the order alone when a mesh container (a rules writer) precedes the validator', () => {
    const pod = appended();
    const inits = pod.spec.initContainers as Json[];
    pod.spec.initContainers = [{ name: meshIdentity('kuma').containers.rulesWriter, image: 'x' }, ...inits];
    const ops = podPatch(pod, SETTINGS).ops;
    expect(ops.some((op: Json) => op.op === 'move')).toBe(false);
  });
});
