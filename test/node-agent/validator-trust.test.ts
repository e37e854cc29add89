import { describe, expect, it } from 'vitest';
import { podViewOf } from '../../src/node-agent/pod-view.js';
import { isTrustedValidator, repositoryOf } from '../../src/node-agent/validator-trust.js';
import { crashLoopPod } from '../harness/kube-api/pods.js';

// Issue 21, item 11: what a pod's author can change in the trusted image to make it say anything.
const TRUSTED = ['registry.example/platform/mesh-interlock'];
const IMAGE = 'registry.example/platform/mesh-interlock:1.2.3';

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
    expect(isTrustedValidator(viewWith(edit), TRUSTED)).toBe(false);
  });

  it('another repository, or none configured: not trusted; a digest entry matches the kubelet imageID', () => {
    const view = viewWith(() => undefined);
    expect(isTrustedValidator(view, ['registry.example/tenant/mesh-interlock'])).toBe(false);
    expect(isTrustedValidator(view, [])).toBe(false);
    expect(isTrustedValidator(view, [`sha256:${'5e'.repeat(32)}`])).toBe(true);
    expect(isTrustedValidator(view, [`sha256:${'6f'.repeat(32)}`])).toBe(false);
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
