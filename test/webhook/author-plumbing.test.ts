import fastJsonPatch from 'fast-json-patch';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { EXIT } from '../../src/config/exit-codes.js';
import { admit } from '../../src/webhook/admit.js';
import { validatorContainer } from '../../src/inject/validator-container.js';
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
  // Issue 43 item 3: fields that change what the validator runs or whether it blocks the pod.
  [
    'restartPolicy: Always (a sidecar the pod never waits for)',
    (_s, v) => (v.restartPolicy = 'Always'),
    /restartPolicy/,
  ],
  [
    'a postStart lifecycle hook',
    (_s, v) => (v.lifecycle = { postStart: { exec: { command: ['/bin/sh', '-c', 'true'] } } }),
    /lifecycle/,
  ],
  ['a livenessProbe', (_s, v) => (v.livenessProbe = { exec: { command: ['true'] } }), /livenessProbe/],
  ['a readinessProbe', (_s, v) => (v.readinessProbe = { tcpSocket: { port: 1 } }), /readinessProbe/],
  ['a startupProbe', (_s, v) => (v.startupProbe = { exec: { command: ['true'] } }), /startupProbe/],
  [
    'NODE_OPTIONS=--require of the author’s',
    (_s, v) => (v.env = [...(v.env ?? []), { name: 'NODE_OPTIONS', value: '--require /tmp/pass.js' }]),
    /NODE_OPTIONS/,
  ],
  ['LD_PRELOAD', (_s, v) => (v.env = [...(v.env ?? []), { name: 'LD_PRELOAD', value: '/tmp/x.so' }]), /LD_PRELOAD/],
  [
    'LD_LIBRARY_PATH from a ConfigMap key',
    (_s, v) =>
      (v.env = [
        ...(v.env ?? []),
        { name: 'LD_LIBRARY_PATH', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } },
      ]),
    /LD_LIBRARY_PATH/,
  ],
  ['PATH (the children it spawns)', (_s, v) => (v.env = [...(v.env ?? []), { name: 'PATH', value: '/tmp' }]), /PATH/],
  [
    'a volume mounted over /opt/interlock',
    (_s, v) => (v.volumeMounts = [...(v.volumeMounts ?? []), { name: 'mine', mountPath: '/opt/interlock' }]),
    /\/opt\/interlock, over Interlock's or the system's files/,
  ],
  [
    'a volume mounted at /opt (above /opt/interlock)',
    (_s, v) => (v.volumeMounts = [...(v.volumeMounts ?? []), { name: 'mine', mountPath: '/opt/' }]),
    /at \/opt\/, over/,
  ],
  [
    'a file mounted over /usr/bin/iptables-save',
    (_s, v) =>
      (v.volumeMounts = [
        ...(v.volumeMounts ?? []),
        { name: 'mine', mountPath: '/usr//bin/iptables-save', subPath: 'fake' },
      ]),
    /over Interlock's or the system's files/,
  ],
  [
    'a volume mounted at /lib64',
    (_s, v) => (v.volumeMounts = [...(v.volumeMounts ?? []), { name: 'mine', mountPath: '/lib64' }]),
    /over Interlock's or the system's files/,
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

/** An app pod in an ambient namespace that already carries the ambient validator as manifest prints it. */
function forgedAmbientPod(forge: (spec: Json, validator: Json) => void): Json {
  const validator = validatorContainer({
    mesh: 'istio-ambient',
    image: SETTINGS.image,
    rulesCheck: false,
    reportEvent: false,
  });
  const spec: Json = {
    initContainers: [validator],
    containers: [{ name: 'web', image: 'registry.example/web:1' }],
  };
  forge(spec, validator);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop', labels: { 'istio.io/dataplane-mode': 'ambient' } },
    spec,
  };
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

  it.each(FORGERIES)(
    'webhook /ambient, a validator already in the pod: %s → denied, naming it',
    (_name, forge, names) => {
      for (const onError of ['allow', 'deny'] as const) {
        const admission = admit(admissionReview(forgedAmbientPod(forge), 'u-amb'), SETTINGS, onError, SHAPE, 'ambient');
        expect(admission.response.response).toMatchObject({ uid: 'u-amb', allowed: false });
        expect(admission.outcome).toBe('denied');
        expect(admission.response.response.status?.message).toMatch(names);
      }
    },
  );

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

describe('/ambient: the validator is Interlock’s exactly, first, and an unread pod says none was added', () => {
  it('any other variable or mount on an existing ambient validator is denied; the token mount passes', () => {
    const other = admit(
      admissionReview(
        forgedAmbientPod((_s, v) => (v.env = [...(v.env ?? []), { name: 'HTTPS_PROXY', value: 'x' }])),
        'u1',
      ),
      SETTINGS,
      'allow',
      SHAPE,
      'ambient',
    );
    expect(other.response.response.status?.message).toMatch(/sets HTTPS_PROXY; Interlock's validator has exactly/);
    const mount = admit(
      admissionReview(
        forgedAmbientPod((_s, v) => (v.volumeMounts = [{ name: 'c', mountPath: '/tmp/x' }])),
        'u2',
      ),
      SETTINGS,
      'allow',
      SHAPE,
      'ambient',
    );
    expect(mount.response.response.status?.message).toMatch(/mounts c at \/tmp\/x; Interlock's validator has exactly/);
    const token = {
      name: 'kube-api-access-x',
      mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      readOnly: true,
    };
    const ok = admit(
      admissionReview(
        forgedAmbientPod((_s, v) => (v.volumeMounts = [...(v.volumeMounts ?? []), token])),
        'u3',
      ),
      SETTINGS,
      'deny',
      SHAPE,
      'ambient',
    );
    expect(ok.response.response.allowed).toBe(true);
  });

  it('an existing validator behind an init container of the pod’s own is moved first', () => {
    const pod = forgedAmbientPod((spec) => {
      spec.initContainers = [{ name: 'fetch', image: 'registry.example/curl:1' }, ...(spec.initContainers as Json[])];
    });
    const admission = admit(admissionReview(pod, 'u4'), SETTINGS, 'deny', SHAPE, 'ambient');
    expect(admission.outcome).toBe('patched');
    const patch = JSON.parse(
      Buffer.from(String(admission.response.response.patch), 'base64').toString('utf8'),
    ) as Json[];
    expect(patch).toContainEqual({ op: 'move', from: '/spec/initContainers/1', path: '/spec/initContainers/0' });
    const patched = fastJsonPatch.applyPatch(structuredClone(pod), structuredClone(patch) as fastJsonPatch.Operation[])
      .newDocument as Json;
    expect((patched.spec.initContainers as Json[]).map((c) => c.name)).toEqual(['istio-ambient-validation', 'fetch']);
  });

  it('an unreadable request on /ambient says no validator was added, never that a mesh validator stays', () => {
    for (const scope of ['ambient', 'validators'] as const) {
      const admission = admit('{"kind":', SETTINGS, 'allow', SHAPE, scope);
      expect(admission.outcome).toBe('invalid');
      const message = admission.response.response.status?.message ?? '';
      expect(message).not.toMatch(/the mesh validator stays/);
      expect(message).toMatch(scope === 'ambient' ? /no validator was added/ : /no Interlock validator was put in/);
    }
    const denied = admit('{"kind":', SETTINGS, 'deny', SHAPE, 'ambient');
    expect(denied.response.response.status?.message).toMatch(/denied \(--on-error deny\): no validator was added/);
  });
});
