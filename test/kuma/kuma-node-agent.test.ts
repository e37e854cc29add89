import { readFileSync } from 'node:fs';
import path from 'node:path';
import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { shippedValidator } from '../../src/cli/shipped-validator.js';
import { meshIdentity } from '../../src/mesh/meshes.js';
import { blockedOf } from '../../src/node-agent/blocked.js';
import { podViewOf } from '../../src/node-agent/pod-view.js';
import { distrustOf } from '../../src/node-agent/validator-trust.js';
import { podPatch } from '../../src/webhook/validator-patch.js';

/**
 * Interlock's node agent as Kuma's missing repair controller (kumahq/kuma#13572): a pod whose
 * kuma-validation, patched by the webhook from Kuma's own rendering, last exited with Kuma's
 * failure code is recognised as blocked and its run trusted, so the agent recreates it.
 */
const GOLDEN = path.resolve(import.meta.dirname, '../fixtures/meshes/kuma/2.14.3/injector/inject.34.golden.yaml');
const IMAGE = 'registry.example/platform/mesh-interlock:1.2.3';
type Json = Record<string, ReturnType<typeof JSON.parse>>;
const { validator } = meshIdentity('kuma').containers;
const code = meshIdentity('kuma').failureExitCode;

/** Kuma's rendering with the injector's defaults (dual stack, inbound 15006), patched, then failed. */
function failedPod(exitCode: number): Json {
  const pod = parseYaml(readFileSync(GOLDEN, 'utf8')) as Json;
  const rendered = (pod.spec.initContainers as Json[]).find((container) => container.name === validator) as Json;
  rendered.args = ['--config-file=/tmp/.kumactl', '--ip-family-mode=dualstack', '--validation-server-port=15006'];
  const patched = fastJsonPatch.applyPatch(
    pod,
    podPatch(pod, { image: IMAGE, annotations: {} }).ops as fastJsonPatch.Operation[],
    true,
    false,
  ).newDocument as Json;
  patched.metadata = { ...patched.metadata, uid: 'u-1', namespace: 'default', resourceVersion: '7' };
  patched.spec.nodeName = 'node-a';
  patched.status = {
    phase: 'Pending',
    initContainerStatuses: [
      {
        name: validator,
        image: IMAGE,
        imageID: `${IMAGE}@sha256:${'a'.repeat(64)}`,
        ready: false,
        restartCount: 1,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode, reason: 'Error', message: 'RulesMissing: ...' } },
      },
    ],
  };
  return patched;
}

describe('interlock node --mesh kuma recreates pods Kuma’s validator slot failed', () => {
  it('sees the webhook-patched kuma-validation that exited 98 as blocked and trusts the run', () => {
    const view = podViewOf(failedPod(code), validator);
    expect(view).toBeDefined();
    if (!view) return;
    expect(blockedOf(view, code)).toBeDefined();
    expect(distrustOf(view, ['registry.example/platform/mesh-interlock'], shippedValidator('kuma'))).toBeUndefined();
  });

  it('does not take a crash (exit 1, Kuma’s own code) for a verdict', () => {
    const view = podViewOf(failedPod(1), validator);
    expect(view && blockedOf(view, code)).toBeUndefined();
  });
});
