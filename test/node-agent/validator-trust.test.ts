import { describe, expect, it } from 'vitest';
import { podViewOf } from '../../src/node-agent/pod-view.js';
import { distrustOf, isTrustedValidator, repositoryOf } from '../../src/node-agent/validator-trust.js';
import { meshPods } from '../../scripts/mesh-pods.mjs';
import { applyOps } from '../webhook/validator-patch.test.js';
import { crashLoopPod } from '../harness/kube-api/pods.js';
import { shippedValidator } from '../../src/cli/commands/node/shipped-validator.js';
import { validatorContainer } from '../../src/inject/validator-container.js';
import { podPatch } from '../../src/webhook/validator-patch.js';

// Issue 21, item 11: what a pod's author can change in the trusted image to make it say anything.
const TRUSTED = ['registry.example/platform/mesh-interlock'];
const IMAGE = 'registry.example/platform/mesh-interlock:1.2.3';
const SHIPPED = shippedValidator('linkerd');

function viewWith(edit: (container: Record<string, unknown>, spec: Record<string, unknown>) => void) {
  const pod = crashLoopPod({ name: 'p', image: IMAGE });
  const spec = pod.spec as unknown as Record<string, unknown>;
  edit(pod.spec.initContainers[0] as unknown as Record<string, unknown>, spec);
  return podViewOf(pod, 'linkerd-network-validator')!;
}

describe('which validator runs count as Interlock', () => {
  it('the trusted image as shipped, and the Linkerd drop-in command, are trusted', () => {
    expect(
      isTrustedValidator(
        viewWith(() => undefined),
        TRUSTED,
        SHIPPED,
      ),
    ).toBe(true);
    expect(
      isTrustedValidator(
        viewWith((container) => {
          container.command = ['/usr/lib/linkerd/linkerd2-network-validator'];
          container.env = [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }];
          container.volumeMounts = [
            { name: 'kube-api-access-x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
            { name: 'interlock-podinfo', mountPath: '/etc/interlock/podinfo', readOnly: true },
          ];
        }),
        TRUSTED,
        SHIPPED,
      ),
    ).toBe(true);
  });

  it.each([
    [
      'NODE_OPTIONS loads other code',
      (c: Record<string, unknown>) => (c.env = [{ name: 'NODE_OPTIONS', value: '--require /x/evil.js' }]),
    ],
    [
      'envFrom could carry NODE_OPTIONS',
      (c: Record<string, unknown>) => (c.envFrom = [{ configMapRef: { name: 'x' } }]),
    ],
    [
      'a volume over its files',
      (c: Record<string, unknown>) => (c.volumeMounts = [{ name: 'x', mountPath: '/opt/interlock/bin' }]),
    ],
    ['a lifecycle hook', (c: Record<string, unknown>) => (c.lifecycle = { postStart: { exec: { command: ['sh'] } } })],
    ['node as the command', (c: Record<string, unknown>) => (c.command = ['node', '-e', 'process.exit(95)'])],
    ['an empty command list', (c: Record<string, unknown>) => (c.command = [])],
    [
      'a shared process namespace',
      (_: Record<string, unknown>, spec: Record<string, unknown>) => (spec.shareProcessNamespace = true),
    ],
  ])('%s: not trusted', (_, edit) => {
    expect(isTrustedValidator(viewWith(edit), TRUSTED, SHIPPED)).toBe(false);
  });

  it('another repository, or none configured: not trusted; a digest entry matches the kubelet imageID', () => {
    const view = viewWith(() => undefined);
    expect(isTrustedValidator(view, ['registry.example/tenant/mesh-interlock'], SHIPPED)).toBe(false);
    expect(isTrustedValidator(view, [], SHIPPED)).toBe(false);
    expect(isTrustedValidator(view, [`sha256:${'5e'.repeat(32)}`], SHIPPED)).toBe(true);
    expect(isTrustedValidator(view, [`sha256:${'6f'.repeat(32)}`], SHIPPED)).toBe(false);
  });

  it('repositories are compared as the runtimes normalise them', () => {
    expect(repositoryOf('mesh-interlock:dev')).toBe('docker.io/library/mesh-interlock');
    expect(repositoryOf('docker.io/library/mesh-interlock@sha256:ab')).toBe('docker.io/library/mesh-interlock');
    expect(repositoryOf('me/mesh-interlock')).toBe('docker.io/me/mesh-interlock');
    expect(repositoryOf('localhost:5000/mesh-interlock:1')).toBe('localhost:5000/mesh-interlock');
    expect(repositoryOf('docker-pullable://ghcr.io/o/mesh-interlock@sha256:ab')).toBe('ghcr.io/o/mesh-interlock');
    expect(repositoryOf('ghcr.io/o/mesh-interlock-evil')).not.toBe(repositoryOf('ghcr.io/o/mesh-interlock'));
  });
});

// Issue 35, item 8: the real image, given another check than the printed one, fails genuinely and
// repeatably, and says nothing about the node. The accepted shape is read off the printers.
describe('only the validator as the printers ship it counts', () => {
  const printed = (rulesCheck: boolean, reportEvent: boolean) => (container: Record<string, unknown>) => {
    for (const key of Object.keys(container)) delete container[key];
    Object.assign(container, validatorContainer({ mesh: 'linkerd', image: IMAGE, rulesCheck, reportEvent }));
  };

  it.each([
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ])('the container manifest prints (rules check %s, report event %s) is trusted', (rulesCheck, reportEvent) => {
    expect(isTrustedValidator(viewWith(printed(rulesCheck, reportEvent)), TRUSTED, SHIPPED)).toBe(true);
  });

  it("the webhook's patch of Linkerd's own validator is trusted", () => {
    const pod = crashLoopPod({ name: 'p', image: IMAGE });
    const { ops } = podPatch(pod, { image: IMAGE, annotations: {} });
    const container = pod.spec.initContainers[0] as unknown as Record<string, unknown>;
    for (const op of ops) {
      const field = /^\/spec\/initContainers\/0\/(\w+)$/.exec(op.path)?.[1];
      if (field && op.op === 'add') container[field] = op.value;
    }
    expect(container.command).toEqual(['/usr/lib/linkerd/linkerd2-network-validator']);
    expect(isTrustedValidator(podViewOf(pod, 'linkerd-network-validator')!, TRUSTED, SHIPPED)).toBe(true);
  });

  const withPrinted = (edit: (container: Record<string, unknown>) => void) => (container: Record<string, unknown>) => {
    printed(false, false)(container);
    edit(container);
  };
  it.each([
    ['--outbound-port 9999 added', withPrinted((c) => (c.args = [...(c.args as string[]), '--outbound-port', '9999']))],
    ['--inbound-port 9999 added', withPrinted((c) => (c.args = [...(c.args as string[]), '--inbound-port', '9999']))],
    ['--mesh istio in a Linkerd pod', withPrinted((c) => (c.args = ['--mesh', 'istio']))],
    [
      '--probe-address chosen',
      withPrinted((c) => (c.args = [...(c.args as string[]), '--probe-address', '192.0.2.1'])),
    ],
    ['--probe-port chosen', withPrinted((c) => (c.args = [...(c.args as string[]), '--probe-port', '9999']))],
    ['--family ipv6 only', withPrinted((c) => (c.args = [...(c.args as string[]), '--family', 'ipv6']))],
    ['a shorter deadline', withPrinted((c) => (c.args = [...(c.args as string[]), '--timeout', '100ms']))],
    ['args the validator refuses', withPrinted((c) => (c.args = [...(c.args as string[]), '--bogus']))],
    [
      "Linkerd's argv with another listen port",
      (c: Record<string, unknown>) =>
        (c.args = (c.args as string[]).map((arg) => (arg === '0.0.0.0:4140' ? '0.0.0.0:9999' : arg))),
    ],
    [
      'INTERLOCK_OUTBOUND_PORT in the environment',
      withPrinted((c) => (c.env = [...(c.env as object[]), { name: 'INTERLOCK_OUTBOUND_PORT', value: '9999' }])),
    ],
    [
      'INTERLOCK_POD_ANNOTATIONS pointing at another file',
      withPrinted((c) => (c.env = [...(c.env as object[]), { name: 'INTERLOCK_POD_ANNOTATIONS', value: '/tmp/a' }])),
    ],
    ['POD_NAME given as a literal', withPrinted((c) => (c.env = [{ name: 'POD_NAME', value: 'someone-else' }]))],
    [
      'a raw block device',
      withPrinted((c) => (c.volumeDevices = [{ name: 'disk', devicePath: '/opt/interlock/bin/interlock' }])),
    ],
    ['the node network', (_: Record<string, unknown>, spec: Record<string, unknown>) => (spec.hostNetwork = true)],
  ])('%s: not trusted', (_, edit) => {
    expect(isTrustedValidator(viewWith(edit), TRUSTED, SHIPPED)).toBe(false);
  });

  it("a generic validator never counts: its ports are the pod author's to choose", () => {
    const view = viewWith((container) => {
      for (const key of Object.keys(container)) delete container[key];
      Object.assign(
        container,
        validatorContainer({
          mesh: 'generic',
          image: IMAGE,
          rulesCheck: false,
          reportEvent: false,
          extraArgs: ['--inbound-port', '15006', '--outbound-port', '15001'],
        }),
      );
      container.name = 'linkerd-network-validator';
    });
    expect(isTrustedValidator(view, TRUSTED, shippedValidator('generic'))).toBe(false);
  });
});

describe("the webhook's patch of every rendered mesh validator is trusted by that mesh's agent", () => {
  it.each(meshPods().filter((pod) => pod.validator))('$id', ({ id, pod, mesh }) => {
    const patched = applyOps(pod, podPatch(pod, { image: IMAGE, annotations: {} }).ops);
    const name = mesh === 'linkerd' ? 'linkerd-network-validator' : 'istio-validation';
    const status = {
      name,
      image: IMAGE,
      imageID: `registry.example/platform/mesh-interlock@sha256:${'5e'.repeat(32)}`,
    };
    (patched as { status?: unknown }).status = { initContainerStatuses: [status] };
    const view = podViewOf(patched, name)!;
    const distrust = distrustOf(view, TRUSTED, shippedValidator(mesh as 'linkerd' | 'istio'));
    // Renderings whose argv asks for another check than the preset's (OpenShift's proxy uid range,
    // TPROXY, an overridden proxy uid, custom ports) cannot be told from a tenant's own choice of
    // ports or uids: they do not count (docs/node-agent.md); every default rendering does.
    if (/openshift|tproxy|runas|custom/.test(id))
      expect(distrust).toBe('its argv or environment asks for another check than the printed one');
    else expect(distrust).toBeUndefined();
  });
});
