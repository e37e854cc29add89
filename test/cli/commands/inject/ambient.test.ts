import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInject } from '../../../../src/cli/commands/inject/run.js';

const inject = (text: string, argv: string[] = ['--mesh', 'istio-ambient']) =>
  runInject(['-', ...argv], {}, () => Buffer.from(text));

/** A Deployment whose pod template carries `labels` and `annotations`, in a namespace `nsLabels` describe. */
function workload(podMeta: string, nsLabels = 'istio.io/dataplane-mode: ambient'): string {
  return `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {${nsLabels}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {${podMeta}}
    spec:
      containers: [{name: web, image: "registry.example/web:1"}]
`;
}

describe('interlock inject --mesh istio-ambient refuses pods ambient does not capture', () => {
  it.each([
    [
      'the pod label none',
      workload('labels: {app: web, istio.io/dataplane-mode: none}'),
      /istio\.io\/dataplane-mode=none opts it out/,
    ],
    [
      "a pod Istio's injector will give a sidecar (label)",
      workload('labels: {app: web, sidecar.istio.io/inject: "true"}'),
      /Istio's sidecar injector injects its proxy into it at admission/,
    ],
    [
      "a pod in a namespace Istio's injector also selects",
      workload('labels: {app: web}', 'istio.io/dataplane-mode: ambient, istio-injection: enabled'),
      /Istio's sidecar injector injects its proxy into it at admission/,
    ],
    [
      'a pod carrying sidecar.istio.io/status',
      workload('labels: {app: web}, annotations: {sidecar.istio.io/status: "{}"}'),
      /sidecar\.istio\.io\/status: a sidecar was injected/,
    ],
  ])('%s: ManifestRefused, nothing printed', async (_name, text, sentence) => {
    const outcome = await inject(text);
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/ManifestRefused/);
    expect(outcome.stderr).toMatch(sentence);
    expect(outcome.stderr).toMatch(/leave --mesh istio-ambient off for it/);
  });

  it("Istio's own injected sidecar pod (its golden) is refused too, though it has a validator", async () => {
    const golden = readFileSync(
      join(import.meta.dirname, '../../../fixtures/meshes/istio/HEAD-86c9f01fd735/hello.yaml.cni.injected'),
      'utf8',
    );
    const outcome = await inject(golden);
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.stderr).toMatch(/--mesh istio-ambient does not capture this pod/);
  });

  it('a pod labelled ambient with sidecar.istio.io/inject=false is injected, first among its init containers', async () => {
    const outcome = await inject(
      workload('labels: {app: web, sidecar.istio.io/inject: "false"}', 'istio-injection: enabled'),
    );
    expect(outcome.exitCode, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/initContainers:\n\s+- name: istio-ambient-validation/);
  });
});
