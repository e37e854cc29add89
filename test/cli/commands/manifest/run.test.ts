import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { expectGolden } from '../../../harness/golden.js';
import { kubectlDecode } from '../../../inject/kubectl.js';
import type { Container, KubeDocument } from '../../../inject/shapes.js';

const GOLDEN = join(import.meta.dirname, '../../../inject/golden');

const golden = (name: string, actual: string): void => expectGolden(join(GOLDEN, name), actual);

const CASES: Array<[string, string[]]> = [
  ['manifest-linkerd.yaml', ['--mesh', 'linkerd']],
  ['manifest-istio.yaml', ['--mesh', 'istio']],
  ['manifest-istio-ambient.yaml', ['--mesh', 'istio-ambient']],
  ['manifest-istio-ambient-rules-check.yaml', ['--mesh', 'istio-ambient', '--rules-check']],
  ['manifest-generic.yaml', ['--mesh', 'generic', '--inbound-port', '15006', '--outbound-port', '15001']],
  ['manifest-linkerd-rules-check.yaml', ['--mesh', 'linkerd', '--rules-check']],
  ['manifest-istio-report-event.yaml', ['--mesh', 'istio', '--report-event', '--native-sidecar']],
  ['manifest-rbac.yaml', ['--rbac', '--namespace', 'shop']],
  ['manifest-rbac-accounts.yaml', ['--rbac', '--namespace', 'shop', '--service-account', 'web,api']],
  [
    'manifest-node-agent-cni.yaml',
    ['--node-agent', '--mesh', 'istio', '--cni-audit', '--cni-bin-dir', '/opt/cni/bin,/usr/libexec/cni', '--taint'],
  ],
];

describe('interlock manifest', () => {
  for (const [file, argv] of CASES) {
    it(`prints ${file} for ${argv.join(' ')}`, async () => {
      const result = await runManifest(argv, {});
      expect(result.exitCode).toBe(0);
      golden(file, result.stdout);
    });
  }

  it('names the container as each repair controller looks for it, with the mesh uid and the issue 10 hardening', async () => {
    for (const [mesh, name, uid] of [
      ['linkerd', 'linkerd-network-validator', 65534],
      ['istio', 'istio-validation', 1337],
      ['istio-ambient', 'istio-ambient-validation', 65534],
      ['generic', 'interlock', 65534],
    ] as const) {
      const container = parse(
        (await runManifest(['--mesh', mesh, '--inbound-port', '8443', '--outbound-port', '8080'], {})).stdout,
      ) as Container;
      expect(container.name).toBe(name);
      expect(container.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: uid,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        readOnlyRootFilesystem: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container.terminationMessagePolicy).toBe('FallbackToLogsOnError');
      expect(container.resources?.limits).toEqual({ memory: '128Mi' });
      expect(container.env.map((env) => env.valueFrom?.fieldRef.fieldPath)).toEqual([
        'metadata.name',
        'metadata.namespace',
        'metadata.uid',
      ]);
    }
  });

  it('--rules-check runs as root with NET_ADMIN and NET_RAW and requires the rules', async () => {
    const container = parse((await runManifest(['--mesh', 'istio', '--rules-check'], {})).stdout) as Container;
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: false,
      runAsUser: 0,
      capabilities: { drop: ['ALL'], add: ['NET_ADMIN', 'NET_RAW'] },
    });
    expect(container.args).toEqual([
      '--mesh',
      'istio',
      '--rules',
      'required',
      '--pod-annotations',
      '/etc/interlock/podinfo/annotations',
      '--pod-labels',
      '/etc/interlock/podinfo/labels',
    ]);
    expect(container.volumeMounts).toEqual([
      { name: 'interlock-podinfo', mountPath: '/etc/interlock/podinfo', readOnly: true },
    ]);
  });

  it('--output json is the same data as the YAML: one object, or a v1 List of several', async () => {
    for (const argv of [['--mesh', 'istio', '--report-event'], ['--rbac'], ['--node-agent', '--mesh', 'linkerd']]) {
      const yaml = parseAllDocuments((await runManifest(argv, {})).stdout).map((doc) => doc.toJS() as unknown);
      const json = JSON.parse((await runManifest([...argv, '--output', 'json'], {})).stdout) as unknown;
      expect(json).toEqual(yaml.length === 1 ? yaml[0] : { apiVersion: 'v1', kind: 'List', items: yaml });
    }
  });

  it('a stream is one container snippet or whole objects, never mixed; a flag of another mode is exit 64 naming the mode', async () => {
    const snippet = parseAllDocuments((await runManifest(['--mesh', 'istio', '--report-event'], {})).stdout);
    expect(snippet).toHaveLength(1);
    expect(snippet[0]!.toJS()).not.toHaveProperty('kind');
    for (const argv of [['--rbac'], ['--node-agent', '--mesh', 'linkerd']]) {
      const objects = parseAllDocuments((await runManifest(argv, {})).stdout).map((doc) => doc.toJS() as KubeDocument);
      for (const object of objects)
        expect(object, argv.join(' ')).toMatchObject({ apiVersion: expect.any(String), kind: expect.any(String) });
    }
    const cases: Array<[string[], RegExp]> = [
      [
        [
          '--node-agent',
          '--mesh',
          'linkerd',
          '--report-event',
          '--rules-check',
          '--native-sidecar',
          '--service-account',
          'foo',
        ],
        /--report-event does not apply to manifest --node-agent/,
      ],
      [['--mesh', 'istio', '--namespace', 'shop'], /--namespace does not apply to the init container/],
      [['--mesh', 'istio', '--service-account', 'web'], /--service-account does not apply to the init container/],
      [['--rbac', '--mesh', 'istio'], /--mesh does not apply to manifest --rbac/],
      [['--rbac', '--rules-check'], /--rules-check does not apply to manifest --rbac/],
      [['--mesh', 'istio', '--cni-audit'], /--cni-audit/],
      [['--node-agent', '--mesh', 'linkerd', '--action', 'explode'], /--action/],
    ];
    for (const [argv, message] of cases) {
      const result = await runManifest(argv, {});
      expect(result, argv.join(' ')).toMatchObject({ exitCode: 64, stdout: '' });
      expect(result.stderr, argv.join(' ')).toMatch(message);
    }
  });

  it('--service-account binds existing ServiceAccounts and never prints one; without it, the namespace group', async () => {
    for (const argv of [
      ['--rbac', '--namespace', 'shop', '--service-account', 'web'],
      ['--rbac', '--namespace', 'shop'],
    ]) {
      const objects = parseAllDocuments((await runManifest(argv, {})).stdout).map(
        (doc) => doc.toJS() as KubeDocument & { subjects?: unknown[] },
      );
      expect(objects.map((object) => object.kind)).toEqual(['Role', 'RoleBinding', 'ConfigMap']);
      expect(objects[1]!.subjects).toEqual(
        argv.includes('web')
          ? [{ kind: 'ServiceAccount', name: 'web', namespace: 'shop' }]
          : [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:serviceaccounts:shop' }],
      );
    }
  });

  it('--node-agent takes every node flag, mounts the audited CNI directories read-only, and passes the flags to the agent', async () => {
    const argv = [
      '--node-agent',
      '--mesh',
      'linkerd',
      '--cni-audit',
      '--cni-conf-dir',
      '/etc/cni/multus.d',
      '--cni-bin-dir',
      '/opt/cni/bin,/var/lib/cni/bin',
      '--runtime',
      'crio',
      '--action',
      'label',
      '--breaker-threshold',
      '7',
      '--listen',
      '0.0.0.0:9600',
    ];
    const objects = parseAllDocuments((await runManifest(argv, {})).stdout).map((doc) => doc.toJS() as KubeDocument);
    const pod = objects.find((object) => object.kind === 'DaemonSet')!.spec.template!.spec as unknown as {
      volumes: Array<{ name: string; hostPath: { path: string } }>;
      containers: Array<{
        args: string[];
        volumeMounts: Array<{ name: string; mountPath: string; readOnly: boolean }>;
        ports: Array<{ containerPort: number }>;
      }>;
    };
    const container = pod.containers[0]!;
    // No --trusted-image: the agent trusts its own image's repository, read from its pod, so that
    // kustomize's images: moves the trust with the image (docs/node-agent.md).
    expect(container.args).toEqual(['node', '--mesh=linkerd', ...argv.slice(3)]);
    // The audit asks the runtime what it loaded: CRI-O's socket, by --runtime crio, read-only.
    expect(pod.volumes.map((volume) => volume.hostPath.path)).toEqual([
      '/etc/cni/multus.d',
      '/opt/cni/bin',
      '/var/lib/cni/bin',
      '/var/run/crio/crio.sock',
    ]);
    expect(pod.volumes[3]).toMatchObject({ hostPath: { type: 'Socket' } });
    expect(container.volumeMounts).toEqual(
      pod.volumes.map((volume) => ({ name: volume.name, mountPath: volume.hostPath.path, readOnly: true })),
    );
    expect(container.ports[0]!.containerPort).toBe(9600);
    expect(objects[0]).toMatchObject({
      kind: 'Namespace',
      metadata: { name: 'interlock-system', labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } },
    });
    const plain = parseAllDocuments((await runManifest(['--node-agent', '--mesh', 'linkerd'], {})).stdout).map(
      (doc) => doc.toJS() as KubeDocument,
    );
    expect(JSON.stringify(plain)).not.toContain('hostPath');
  });

  it('--node-agent --cni-multus-conf-dir mounts Multus directory read-only too; without the flag it is not mounted', async () => {
    const paths = async (extra: string[]) => {
      const argv = ['--node-agent', '--mesh', 'istio', '--cni-audit', ...extra];
      const objects = parseAllDocuments((await runManifest(argv, {})).stdout).map((doc) => doc.toJS() as KubeDocument);
      const pod = objects.find((object) => object.kind === 'DaemonSet')!.spec.template!.spec as unknown as {
        volumes: Array<{ hostPath: { path: string } }>;
        containers: Array<{ volumeMounts: Array<{ mountPath: string; readOnly: boolean }> }>;
      };
      expect(pod.containers[0]!.volumeMounts.every((mount) => mount.readOnly)).toBe(true);
      return pod.volumes.map((volume) => volume.hostPath.path);
    };
    expect(await paths(['--cni-multus-conf-dir', '/etc/cni/multus/net.d'])).toEqual([
      '/etc/cni/net.d',
      '/opt/cni/bin',
      '/etc/cni/multus/net.d',
      '/run/containerd/containerd.sock',
    ]);
    expect(await paths([])).toEqual(['/etc/cni/net.d', '/opt/cni/bin', '/run/containerd/containerd.sock']);
  });

  it('--node-agent --cni-multus-conf-dir grants get on network-attachment-definitions, and nothing else more', async () => {
    const rules = async (extra: string[]) => {
      const argv = ['--node-agent', '--mesh', 'istio', '--cni-audit', ...extra];
      const objects = parseAllDocuments((await runManifest(argv, {})).stdout).map((doc) => doc.toJS() as KubeDocument);
      const role = objects.find((object) => object.kind === 'ClusterRole') as unknown as {
        rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
      };
      return role.rules;
    };
    const plain = await rules([]);
    const multus = await rules(['--cni-multus-conf-dir', '/etc/cni/multus/net.d']);
    expect(JSON.stringify(plain)).not.toContain('network-attachment-definitions');
    expect(multus).toEqual([
      ...plain,
      { apiGroups: ['k8s.cni.cncf.io'], resources: ['network-attachment-definitions'], verbs: ['get'] },
    ]);
  });

  it('--mesh generic needs both ports, which reach validate; without them exit 64 (a generic validator without ports could only fail)', async () => {
    const container = parse(
      (await runManifest(['--mesh', 'generic', '--inbound-port', '8443', '--outbound-port', '8080'], {})).stdout,
    ) as Container;
    expect(container.args).toEqual(['--mesh', 'generic', '--inbound-port', '8443', '--outbound-port', '8080']);
    for (const argv of [
      ['--mesh', 'generic'],
      ['--mesh', 'generic', '--inbound-port', '1'],
      ['--mesh', 'generic', '--inbound-port', '0', '--outbound-port', '1'],
    ]) {
      const result = await runManifest(argv, {});
      expect(result.exitCode).toBe(64);
      expect(result.stderr).toMatch(/--inbound-port|port 1-65535/);
    }
  });

  it('bad flags exit 64 naming the flag', async () => {
    for (const argv of [
      ['--mesh', 'consul'],
      ['--bogus'],
      [],
      ['--mesh', 'istio', '--output', 'xml'],
      ['--mesh', 'istio', 'extra'],
    ]) {
      const result = await runManifest(argv, {});
      expect(result.exitCode).toBe(64);
      expect(result.stdout).toBe('');
    }
    expect((await runManifest(['--mesh', 'consul'], {})).stderr).toMatch(/--mesh="consul"/);
    expect((await runManifest(['--bogus'], {})).stderr).toMatch(/--bogus/);
  });

  it('is valid Kubernetes for the real kubectl: every field survives its typed decoding', async () => {
    for (const argv of [
      ['--mesh', 'linkerd', '--rules-check'],
      ['--mesh', 'istio', '--report-event'],
      ['--mesh', 'istio-ambient'],
    ]) {
      const documents = parseAllDocuments((await runManifest(argv, {})).stdout).map(
        (doc) => doc.toJS() as Record<string, unknown>,
      );
      const [container] = documents;
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { initContainers: [container], containers: [{ name: 'app', image: 'app' }] },
      };
      const decoded = kubectlDecode(JSON.stringify(pod));
      expect((decoded[0]?.spec as { initContainers: unknown[] }).initContainers[0]).toEqual(container);
    }
  });
});

describe('interlock manifest --node-agent', () => {
  it("prints the node agent's documents (from src/node-agent) with the image and mesh given", async () => {
    const result = await runManifest(
      ['--node-agent', '--mesh', 'istio', '--image', 'registry.example/interlock:1'],
      {},
    );
    expect(result.exitCode).toBe(0);
    const documents = parseAllDocuments(result.stdout).map((doc) => doc.toJS() as KubeDocument);
    expect(documents.map((doc) => doc.kind)).toContain('DaemonSet');
    const daemonSet = documents.find((doc) => doc.kind === 'DaemonSet');
    expect(JSON.stringify(daemonSet)).toContain('registry.example/interlock:1');
  });
});
