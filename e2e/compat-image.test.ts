import { afterEach, describe, expect, it } from 'vitest';
import { ISTIO_VALIDATION, runInterlock } from './harness/interlock.js';
import { Pod } from './harness/pod.js';
import { corpusRules } from './harness/rules.js';
import { istioValidationArgs } from '../test/meshes/mesh-fixtures.js';

/**
 * What the CRI suite (e2e/cri/mesh-validators.test.ts) does not cover of the drop-in swap: an
 * option istio-iptables knows but Interlock does not is a configuration error (64), never a pass.
 * The meshes' own injected validators, passing and failing, run on the kubelet's path there.
 */
/** istio-validation's args as Istio renders them (test/fixtures/meshes), with a short probe timeout. */
const ISTIO_ARGS = [...istioValidationArgs(), '--probe-timeout', '5s'];

const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.destroy();
});

async function meshedPod(rules: 'istio-cni/basic' | undefined): Promise<Pod> {
  const pod = await Pod.create();
  pods.push(pod);
  await pod.runPrimaryCni();
  if (rules) await pod.runMeshCni(corpusRules(rules));
  return pod;
}

describe("Istio's args after the image's entrypoint, as uid 1337", () => {
  it('exits 64 naming an option it does not know, where the same args without it fail 126', async () => {
    const pod = await meshedPod(undefined);
    expect((await runInterlock(pod, { security: ISTIO_VALIDATION, args: ISTIO_ARGS })).exitCode).toBe(126);
    const unknown = await runInterlock(pod, { security: ISTIO_VALIDATION, args: [...ISTIO_ARGS, '--proxy-port'] });
    expect(unknown.exitCode).toBe(64);
    expect(unknown.stderr).toMatch(/"--proxy-port"/);
  });
});
