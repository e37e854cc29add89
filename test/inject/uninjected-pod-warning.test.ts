import { describe, expect, it } from 'vitest';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { meshIdentity } from '../../src/mesh/meshes.js';

// A Deployment piped from kubectl get has no proxy yet: where the mesh's injector adds it at
// admission it adds its own validator too, under the same name as the one inject added.
const deployment = (containers: string[]) =>
  [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: web, namespace: shop}',
    'spec:',
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec:',
    `      containers: [${containers.map((name) => `{name: ${name}, image: nginx}`).join(', ')}]`,
    '',
  ].join('\n');

const inject = (mesh: string, text: string) =>
  runInject(['--mesh', mesh, '--image', 'registry.example/interlock:1'], {}, () => Buffer.from(text));

describe("inject --mesh M on a pod without M's proxy", () => {
  for (const mesh of ['linkerd', 'istio', 'kuma'] as const) {
    const { proxy, validator } = meshIdentity(mesh).containers;
    it(`${mesh}: still injects, and warns of the duplicate ${validator} and points at the webhook`, async () => {
      const outcome = await inject(mesh, deployment(['web']));
      expect(outcome.exitCode, outcome.stderr).toBe(0);
      expect(outcome.stdout).toContain(validator);
      expect(outcome.stderr).toMatch(new RegExp(`warning: Deployment/web has no ${proxy ?? ''} container`));
      expect(outcome.stderr).toContain(validator);
      expect(outcome.stderr).toContain('manifest --webhook');
    });

    it(`${mesh}: says nothing when the pod already has ${proxy ?? ''} (injected before)`, async () => {
      const outcome = await inject(mesh, deployment(['web', proxy ?? '']));
      expect(outcome.exitCode, outcome.stderr).toBe(0);
      expect(outcome.stderr).not.toContain('has no');
    });
  }
});
