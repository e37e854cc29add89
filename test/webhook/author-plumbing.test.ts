import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { EXIT } from '../../src/config/exit-codes.js';
import { admit } from '../../src/webhook/admit.js';
import { webhookBudget } from '../../src/webhook/webhook-budget.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';

type Json = Record<string, ReturnType<typeof JSON.parse>>;
const SETTINGS = { image: 'registry.example/interlock:1.0.0', annotations: { 'interlock.dev/t': 'y' } };
const SHAPE = webhookBudget(3 * 1024 * 1024).shape;
const webhookPod = meshPods().find((p) => p.mesh === 'linkerd' && p.validator)!;
const injectDeployment = parse(
  readFileSync(join(import.meta.dirname, '../inject/fixtures/linkerd-cni-deployment.yaml'), 'utf8'),
) as Json;
const VALIDATOR = 'linkerd-network-validator';

/** Ways a pod's author could hand the validator inputs of their own making. */
const FORGERIES: Array<[string, (spec: Json, validator: Json) => void, RegExp]> = [
  [
    'a volume named interlock-podinfo holding a ConfigMap',
    (spec) => (spec.volumes = [...(spec.volumes ?? []), { name: 'interlock-podinfo', configMap: { name: 'fake' } }]),
    /volume interlock-podinfo/,
  ],
  [
    'a downward-API interlock-podinfo with an extra file',
    (spec) =>
      (spec.volumes = [
        ...(spec.volumes ?? []),
        {
          name: 'interlock-podinfo',
          downwardAPI: {
            items: [
              { path: 'annotations', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            ],
          },
        },
      ]),
    /volume interlock-podinfo/,
  ],
  [
    'INTERLOCK_POD_ANNOTATIONS pointing at a file of the author’s',
    (_spec, v) => (v.env = [...(v.env ?? []), { name: 'INTERLOCK_POD_ANNOTATIONS', value: '/tmp/forged' }]),
    /INTERLOCK_POD_ANNOTATIONS/,
  ],
  [
    'another INTERLOCK_* setting on the validator (INTERLOCK_RULES)',
    (_spec, v) => (v.env = [...(v.env ?? []), { name: 'INTERLOCK_RULES', value: 'off' }]),
    /INTERLOCK_RULES/,
  ],
  [
    'POD_NAME naming another pod (the termination message and Event would blame it)',
    (_spec, v) => (v.env = [...(v.env ?? []), { name: 'POD_NAME', value: 'someone-else' }]),
    /POD_NAME/,
  ],
  [
    'envFrom on the validator (any INTERLOCK_* a ConfigMap holds)',
    (_spec, v) => (v.envFrom = [{ configMapRef: { name: 'settings' } }]),
    /envFrom/,
  ],
  [
    'a volume of the author’s mounted at /etc/interlock/podinfo/',
    (_spec, v) =>
      (v.volumeMounts = [...(v.volumeMounts ?? []), { name: 'mine', mountPath: '/etc/interlock/podinfo/' }]),
    /\/etc\/interlock\/podinfo/,
  ],
  [
    'a file mounted over /etc/interlock/podinfo/annotations',
    (_spec, v) =>
      (v.volumeMounts = [
        ...(v.volumeMounts ?? []),
        { name: 'mine', mountPath: '/etc//interlock/podinfo/annotations', subPath: 'a' },
      ]),
    /\/etc\/interlock\/podinfo/,
  ],
];

function forgedWebhookPod(forge: (spec: Json, validator: Json) => void): Json {
  const pod = structuredClone(webhookPod.pod) as Json;
  forge(
    pod.spec,
    (pod.spec.initContainers as Json[]).find((c) => c.name === VALIDATOR)!,
  );
  return pod;
}

function forgedDeployment(forge: (spec: Json, validator: Json) => void): string {
  const deployment = structuredClone(injectDeployment);
  const spec = deployment.spec.template.spec as Json;
  forge(
    spec,
    (spec.initContainers as Json[]).find((c) => c.name === VALIDATOR)!,
  );
  return JSON.stringify(deployment);
}

describe('plumbing the pod’s author wrote is refused, never fed to the validator', () => {
  it.each(FORGERIES)('webhook: %s → denied, naming it', (_name, forge, names) => {
    for (const onError of ['allow', 'deny'] as const) {
      const admission = admit(admissionReview(forgedWebhookPod(forge), 'u-forged'), SETTINGS, onError, SHAPE);
      expect(admission.response.response).toMatchObject({ uid: 'u-forged', allowed: false });
      expect(admission.response.response.patch).toBeUndefined();
      expect(admission.outcome).toBe('denied');
      expect(admission.response.response.status?.message).toMatch(names);
    }
  });

  it.each(FORGERIES)('inject: %s → refused (exit 65), naming it', async (_name, forge, names) => {
    const out = await runInject(['-'], {}, () => Buffer.from(forgedDeployment(forge)));
    expect(out.exitCode).toBe(EXIT.dataError);
    expect(out.stderr).toMatch(names);
    expect(out.stdout).toBe('');
  });

  it('Interlock’s own plumbing, as the API server hands it back (defaults filled in), passes both paths', async () => {
    const ours = (spec: Json, v: Json) => {
      spec.volumes = [
        ...(spec.volumes ?? []),
        {
          name: 'interlock-podinfo',
          downwardAPI: {
            defaultMode: 420,
            items: [
              { path: 'annotations', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.annotations' } },
              { path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } },
            ],
          },
        },
      ];
      v.volumeMounts = [{ name: 'interlock-podinfo', mountPath: '/etc/interlock/podinfo', readOnly: true }];
      v.env = [{ name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }];
    };
    const admission = admit(admissionReview(forgedWebhookPod(ours), 'u-ours'), SETTINGS, 'deny', SHAPE);
    expect(admission.outcome).toBe('patched');
    const out = await runInject(['--image', 'registry.example.com/mesh-interlock:0.1.0', '-'], {}, () =>
      Buffer.from(forgedDeployment(ours)),
    );
    expect(out.stderr).toBe('');
    expect(out.exitCode).toBe(EXIT.pass);
  });
});
