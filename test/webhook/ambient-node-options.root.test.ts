import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validatorContainer } from '../../src/inject/validator-container.js';
import { admit } from '../../src/webhook/admit.js';
import { webhookBudget } from '../../src/webhook/webhook-budget.js';
import { admissionReview } from '../../scripts/mesh-pods.mjs';
import { usePods } from '../harness/pod-namespace.js';

// Issue 43 item 3: `NODE_OPTIONS=--require …` on the ambient validator ran the author's code before
// Interlock's first line, and the built CLI exited 0 with no probe. The runtime cannot defend
// itself (Node reads the variable before any of Interlock runs), so the webhook denies the pod:
// no such validator ever reaches a kubelet. Both halves are shown: the threat in a pod namespace
// with no rules and no ztunnel, and the webhook's answer to the pod that carries it.
const pod = usePods(afterEach);
const SETTINGS = { image: 'registry.example/interlock:1.0.0', annotations: {} };
const SHAPE = webhookBudget(3 * 1024 * 1024).shape;

function ambientPod(env: Array<{ name: string; value: string }>): Record<string, unknown> {
  const validator = validatorContainer({
    mesh: 'istio-ambient',
    image: SETTINGS.image,
    rulesCheck: false,
    reportEvent: false,
  });
  validator.env = [...(validator.env as unknown[]), ...env];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop', labels: { 'istio.io/dataplane-mode': 'ambient' } },
    spec: { initContainers: [validator], containers: [{ name: 'web', image: 'registry.example/web:1' }] },
  };
}

describe('NODE_OPTIONS on the ambient validator', () => {
  it('runs the author’s code and exits 0 unprobed in the built CLI, so /ambient denies the pod', async () => {
    const ns = pod();
    const pass = join(ns.tmp, 'pass.cjs');
    writeFileSync(pass, 'process.exit(0);\n', { mode: 0o644 });
    const env = [{ name: 'NODE_OPTIONS', value: `--require ${pass}` }];

    const forged = await ns.runInterlock(['--mesh', 'istio-ambient', '--timeout', '2s'], {
      env: Object.fromEntries(env.map((entry) => [entry.name, entry.value])),
    });
    expect(forged.exitCode, forged.stderr).toBe(0);
    expect(forged.terminationMessage).toBe('');
    const honest = await ns.runInterlock(['--mesh', 'istio-ambient', '--timeout', '2s']);
    expect(honest.exitCode, honest.stderr).toBe(126);

    for (const onError of ['allow', 'deny'] as const) {
      const admission = admit(admissionReview(ambientPod(env), 'u-node'), SETTINGS, onError, SHAPE, 'ambient');
      expect(admission.outcome).toBe('denied');
      expect(admission.response.response).toMatchObject({ uid: 'u-node', allowed: false });
      expect(admission.response.response.status?.message).toMatch(
        /sets NODE_OPTIONS, which changes what the validator's runtime loads/,
      );
    }
    const clean = admit(admissionReview(ambientPod([]), 'u-clean'), SETTINGS, 'deny', SHAPE, 'ambient');
    expect(clean.response.response.allowed).toBe(true);
  });
});
