import { Certificate, Issuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1';
import { MutatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../src/cli/commands/manifest/run.js';
import { WEBHOOK_COMMAND_FLAGS } from '../../src/cli/commands/webhook/flags.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';

/** Parsed YAML, read loosely. */
type Doc = Record<string, ReturnType<typeof JSON.parse>>;

/** The Kubernetes OpenAPI schema (kubernetes-models, and cert-manager's CRD schema) of each kind printed. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'v1/ConfigMap': ConfigMap,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': MutatingWebhookConfiguration,
  'cert-manager.io/v1/Issuer': Issuer,
  'cert-manager.io/v1/Certificate': Certificate,
};

async function printed(...argv: string[]): Promise<Doc[]> {
  const outcome = await runManifest(['--webhook', '--image', 'registry.example/interlock:1.0.0', ...argv], {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc);
}

const byKind = (documents: Doc[], kind: string) => documents.find((document) => document.kind === kind)!;

describe('interlock manifest --webhook', () => {
  const ca = mkdtempSync(join(tmpdir(), 'interlock-ca-'));
  const caFile = join(ca, 'ca.crt');
  writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

  it.each([
    [[]],
    [['--ca-bundle', caFile]],
    [['--webhook-client-ca', caFile, '--api-server-cidr', '10.0.0.0/24,fd00::/64', '--metrics-namespace', 'obs']],
    [['--namespace', 'mesh-admission', '--failure-policy', 'Fail', '--canary-namespace', 'shop', '--output', 'json']],
    [['--mesh', 'istio-ambient', '--canary-namespace', 'shop']],
  ])('every document validates against the Kubernetes OpenAPI schema (%j)', async (argv) => {
    const documents = argv.includes('json')
      ? (JSON.parse((await runManifest(['--webhook', ...argv], {})).stdout) as { kind: string; items: Doc[] }).items
      : await printed(...argv);
    expect(documents.length).toBeGreaterThanOrEqual(5);
    for (const document of documents) {
      const Model = MODELS[`${document.apiVersion}/${document.kind}`];
      expect(Model, `${document.apiVersion}/${document.kind}`).toBeDefined();
      new Model!(document as never).validate();
    }
  });

  it('a document that breaks the schema is caught by the same check', () => {
    expect(() => new Deployment({ metadata: { name: 'x' }, spec: { replicas: 'two' } } as never).validate()).toThrow();
    expect(() =>
      new MutatingWebhookConfiguration({ metadata: { name: 'x' }, webhooks: [{ name: 'a' }] } as never).validate(),
    ).toThrow();
  });

  it('the same check fails each printed document once a field of it is broken', async () => {
    const documents = await printed();
    const breakers: Record<string, (document: Doc) => void> = {
      Deployment: (d) => (d.spec.replicas = 'two'),
      MutatingWebhookConfiguration: (d) => delete d.webhooks[0].sideEffects,
      Service: (d) => (d.spec.ports[0].port = 'https'),
      PodDisruptionBudget: (d) => (d.spec.selector = 'app'),
      NetworkPolicy: (d) => (d.spec.ingress[0].ports[0].protocol = 7),
      ServiceAccount: (d) => (d.automountServiceAccountToken = 'no'),
      Namespace: (d) => (d.metadata.labels = 'restricted'),
      Issuer: (d) => (d.spec = 'self-signed'),
      Certificate: (d) => delete d.spec.secretName,
      ConfigMap: (d) => (d.data = 'installed'),
      Role: (d) => (d.rules[0].verbs = 'get'),
      RoleBinding: (d) => delete d.roleRef,
    };
    for (const document of documents) {
      const broken = structuredClone(document);
      const breaker = breakers[String(document.kind)];
      expect(breaker, String(document.kind)).toBeDefined();
      breaker!(broken);
      const Model = MODELS[`${document.apiVersion}/${document.kind}`]!;
      expect(() => new Model(broken as never).validate(), String(document.kind)).toThrow();
    }
  });

  it('refuses flags of other modes with --webhook, and --webhook flags without it, exit 64', async () => {
    for (const argv of [
      ['--webhook', '--mesh', 'linkerd'],
      ['--webhook', '--rules-check'],
      ['--webhook', '--node-agent'],
      ['--webhook', '--rbac'],
      ['--webhook', '--service-account', 'app'],
      ['--mesh', 'linkerd', '--failure-policy', 'Fail'],
      ['--rbac', '--canary-namespace', 'shop'],
    ]) {
      const outcome = await runManifest(argv, {});
      expect(outcome.exitCode, argv.join(' ')).toBe(64);
      expect(outcome.stderr, argv.join(' ')).toMatch(/ConfigInvalid: --[a-z-]+ does not apply to /);
    }
  });

  it('runs 2 non-root, read-only replicas spread over nodes, with a PDB, and one API right: get its own pod', async () => {
    const documents = await printed();
    // The image it injects is its own, read from its pod: a get in its own namespace, nothing more.
    const role = byKind(documents, 'Role');
    expect(role.metadata.namespace).toBe('interlock-webhook');
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
    expect(byKind(documents, 'RoleBinding').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'interlock-webhook', namespace: 'interlock-webhook' },
    ]);
    expect(documents.map((d) => d.kind).filter((kind) => /Cluster/.test(kind))).toEqual([]);
    expect(byKind(documents, 'ServiceAccount').automountServiceAccountToken).toBe(false);
    const deployment = byKind(documents, 'Deployment');
    expect(deployment.spec.replicas).toBe(2);
    const pod = deployment.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(
      pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey,
    ).toBe('kubernetes.io/hostname');
    const container = pod.containers[0];
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(byKind(documents, 'PodDisruptionBudget').spec).toMatchObject({
      minAvailable: 1,
      selector: { matchLabels: deployment.spec.selector.matchLabels },
    });
    expect(deployment.spec.template.metadata.labels).toMatchObject(byKind(documents, 'Service').spec.selector);
  });

  it("the Deployment's command line is one `interlock webhook` accepts, and it mounts the certificate's Secret", async () => {
    const documents = await printed();
    const pod = byKind(documents, 'Deployment').spec.template.spec;
    const [command, ...flags] = pod.containers[0].args as string[];
    expect(command).toBe('webhook');
    const parsed = parseCommandLine('webhook', flags, {}, WEBHOOK_COMMAND_FLAGS);
    // No --image: it injects its own container's image, read from the pod the downward API names.
    expect(parsed.ok && parsed.value.sources.get('image')).toBeUndefined();
    expect(flags.filter((flag) => flag.includes('registry.example'))).toEqual([]);
    expect(pod.containers[0].image).toBe('registry.example/interlock:1.0.0');
    expect(pod.containers[0].name).toBe('webhook');
    expect(pod.containers[0].env).toEqual([
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ]);
    expect(pod.volumes[0].secret.secretName).toBe(byKind(documents, 'Certificate').spec.secretName);
    expect(byKind(documents, 'Certificate').spec.dnsNames).toContain('interlock-webhook.interlock-webhook.svc');
  });

  it('registers for Pod CREATE with the safe defaults, outside kube-system and its own namespace', async () => {
    const documents = await printed('--namespace', 'mesh-admission');
    const configuration = byKind(documents, 'MutatingWebhookConfiguration');
    expect(configuration.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(
      'mesh-admission/interlock-webhook',
    );
    const [webhook] = configuration.webhooks;
    expect(webhook).toMatchObject({
      sideEffects: 'None',
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
      admissionReviewVersions: ['v1'],
    });
    expect(webhook.timeoutSeconds).toBeLessThanOrEqual(5);
    expect(webhook.rules).toEqual([
      { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
    ]);
    expect(webhook.namespaceSelector.matchExpressions).toContainEqual({
      key: 'kubernetes.io/metadata.name',
      operator: 'NotIn',
      values: ['kube-system', 'mesh-admission'],
    });
    expect(webhook.clientConfig.service).toMatchObject({
      name: 'interlock-webhook',
      namespace: 'mesh-admission',
      path: '/mutate',
    });
    expect(webhook.clientConfig.caBundle).toBeUndefined();
    // Named after the meshes' injectors: called after them in name order.
    for (const injector of [
      'istio-sidecar-injector',
      'istio-revision-tag-default',
      'linkerd-proxy-injector-webhook-config',
    ])
      expect(configuration.metadata.name > injector).toBe(true);
  });

  it('--mesh istio-ambient adds two disjoint entries on /ambient: namespace ambient and pod not none; else pod ambient', async () => {
    const plain = byKind(await printed(), 'MutatingWebhookConfiguration');
    expect(plain.webhooks).toHaveLength(1);
    const configuration = byKind(await printed('--mesh', 'istio-ambient'), 'MutatingWebhookConfiguration');
    const [validators, byNamespace, byPod] = configuration.webhooks;
    expect(validators).toEqual(plain.webhooks[0]);
    const system = {
      key: 'kubernetes.io/metadata.name',
      operator: 'NotIn',
      values: ['kube-system', 'interlock-webhook'],
    };
    const optOut = { key: 'interlock.dev/admission', operator: 'NotIn', values: ['disabled'] };
    const mode = 'istio.io/dataplane-mode';
    expect(byNamespace).toMatchObject({
      name: 'ambient-namespace.webhook.interlock.dev',
      clientConfig: { service: { path: '/ambient' } },
      namespaceSelector: { matchExpressions: [system, { key: mode, operator: 'In', values: ['ambient'] }] },
      objectSelector: { matchExpressions: [optOut, { key: mode, operator: 'NotIn', values: ['none'] }] },
      reinvocationPolicy: 'IfNeeded',
      failurePolicy: 'Ignore',
    });
    expect(byPod).toMatchObject({
      name: 'ambient-pod.webhook.interlock.dev',
      clientConfig: { service: { path: '/ambient' } },
      namespaceSelector: { matchExpressions: [system, { key: mode, operator: 'NotIn', values: ['ambient'] }] },
      objectSelector: { matchExpressions: [optOut, { key: mode, operator: 'In', values: ['ambient'] }] },
    });
    for (const mesh of ['istio', 'linkerd', 'generic']) {
      const outcome = await runManifest(['--webhook', '--mesh', mesh], {});
      expect(outcome.exitCode, mesh).toBe(64);
      expect(outcome.stderr).toMatch(
        /--mesh does not apply to manifest --webhook \(given [a-z]+\).*only --mesh istio-ambient/,
      );
    }
  });

  it('--ca-bundle writes the CA and drops cert-manager; --canary-namespace selects one namespace; --failure-policy Fail', async () => {
    const documents = await printed('--ca-bundle', caFile, '--canary-namespace', 'shop', '--failure-policy', 'Fail');
    expect(documents.some((d) => String(d.apiVersion).startsWith('cert-manager'))).toBe(false);
    const configuration = byKind(documents, 'MutatingWebhookConfiguration');
    expect(configuration.metadata.annotations).toBeUndefined();
    const [webhook] = configuration.webhooks;
    expect(Buffer.from(webhook.clientConfig.caBundle, 'base64').toString()).toMatch(/BEGIN CERTIFICATE/);
    expect(webhook.failurePolicy).toBe('Fail');
    expect(webhook.namespaceSelector.matchExpressions).toContainEqual({
      key: 'kubernetes.io/metadata.name',
      operator: 'In',
      values: ['shop'],
    });
  });

  it('a NetworkPolicy opens the admission port (to the API servers when named) and the metrics port to one namespace, out only to the API server', async () => {
    const open = byKind(await printed(), 'NetworkPolicy');
    const deployment = byKind(await printed(), 'Deployment');
    const container = deployment.spec.template.spec.containers[0];
    const portOf = (name: string) => container.ports.find((p: Doc) => p.name === name).containerPort as number;
    expect(open.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(open.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(open.spec.egress).toEqual([
      {
        ports: [
          { protocol: 'TCP', port: 443 },
          { protocol: 'TCP', port: 6443 },
        ],
      },
    ]);
    expect(open.spec.ingress).toEqual([
      { ports: [{ protocol: 'TCP', port: portOf('https') }] },
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ protocol: 'TCP', port: portOf('metrics') }],
      },
    ]);
    expect(portOf('metrics')).not.toBe(portOf('https'));
    const narrowed = byKind(await printed('--api-server-cidr', '10.0.0.10/32,fd00::1/128'), 'NetworkPolicy');
    expect(narrowed.spec.ingress[0].from).toEqual([
      { ipBlock: { cidr: '10.0.0.10/32' } },
      { ipBlock: { cidr: 'fd00::1/128' } },
    ]);
    expect(narrowed.spec.egress).toEqual([{ to: narrowed.spec.ingress[0].from }]);
    // The probes go to the metrics port: the kubelet has no client certificate to show.
    expect(container.livenessProbe.httpGet).toMatchObject({ port: 'metrics', scheme: 'HTTP' });
    expect(container.readinessProbe.httpGet).toMatchObject({ port: 'metrics', scheme: 'HTTP' });
  });

  it('without --api-server-cidr the warning names both openings the policy prints: any source in, ports 443 and 6443 out', async () => {
    const outcome = await runManifest(['--webhook', '--image', 'registry.example/interlock:1.0.0'], {});
    const policy = byKind(
      parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc),
      'NetworkPolicy',
    );
    const outPorts = (policy.spec.egress[0].ports as Doc[]).map((port) => port.port as number);
    expect(policy.spec.egress[0].to).toBeUndefined();
    expect(outcome.stderr).toContain('every source in the cluster');
    expect(outcome.stderr).toContain(`any address on TCP ${outPorts.join(' and ')}`);
    const narrowed = await runManifest(
      ['--webhook', '--image', 'registry.example/interlock:1.0.0', '--api-server-cidr', '10.0.0.10/32'],
      {},
    );
    expect(narrowed.stderr).not.toContain('any address');
  });

  it('--webhook-client-ca ships the CA in a ConfigMap and runs the webhook with --client-ca on it', async () => {
    const documents = await printed('--webhook-client-ca', caFile);
    const configMap = byKind(documents, 'ConfigMap');
    const pod = byKind(documents, 'Deployment').spec.template.spec;
    const [, ...flags] = pod.containers[0].args as string[];
    const parsed = parseCommandLine('webhook', flags, {}, WEBHOOK_COMMAND_FLAGS);
    expect(parsed.ok).toBe(true);
    const clientCa = parsed.ok ? (parsed.value.values.get('client-ca') as string) : '';
    const mount = pod.containers[0].volumeMounts.find((m: Doc) => clientCa.startsWith(`${m.mountPath}/`));
    const volume = pod.volumes.find((v: Doc) => v.name === mount.name);
    expect(volume.configMap.name).toBe(configMap.metadata.name);
    expect(configMap.data[clientCa.slice(mount.mountPath.length + 1)]).toMatch(/BEGIN CERTIFICATE/);
    // Without it the only ConfigMap is the install record.
    expect((await printed()).filter((d) => d.kind === 'ConfigMap').map((d) => d.metadata.name)).toEqual([
      'interlock-install-webhook',
    ]);
  });

  it('--webhook-client-name runs the webhook with --client-name, read back by its own parser', async () => {
    const documents = await printed(
      '--webhook-client-ca',
      caFile,
      '--webhook-client-name',
      'kube-apiserver,front-proxy-client',
    );
    const [, ...flags] = byKind(documents, 'Deployment').spec.template.spec.containers[0].args as string[];
    const parsed = parseCommandLine('webhook', flags, {}, WEBHOOK_COMMAND_FLAGS);
    expect(parsed.ok ? parsed.value.values.get('client-name') : undefined).toEqual([
      'kube-apiserver',
      'front-proxy-client',
    ]);
    const alone = await runManifest(['--webhook', '--webhook-client-name', 'kube-apiserver'], {});
    expect(alone.exitCode).toBe(64);
    expect(alone.stderr).toMatch(/--webhook-client-name needs --webhook-client-ca/);
  });

  it('refuses a CA file without a certificate, a missing one and a bad policy, exit 64', async () => {
    const bad = join(ca, 'bad.pem');
    writeFileSync(bad, 'hello');
    for (const argv of [
      ['--ca-bundle', bad],
      ['--ca-bundle', join(ca, 'missing')],
      ['--failure-policy', 'ignore'],
      ['--webhook-client-ca', bad],
      ['--api-server-cidr', '10.0.0.0'],
      ['--api-server-cidr', '10.0.0.0/33'],
      ['--metrics-namespace', 'Monitoring'],
    ]) {
      const outcome = await runManifest(['--webhook', ...argv], {});
      expect(outcome.exitCode, argv.join(' ')).toBe(64);
      expect(outcome.stderr).toMatch(/ConfigInvalid/);
    }
    rmSync(ca, { recursive: true, force: true });
  });
});

describe('an admission port open to every source is said out loud', () => {
  const base = ['--webhook', '--image', 'registry.example/interlock:1.0.0'];

  it('without --api-server-cidr: a warning on stderr and above the NetworkPolicy', async () => {
    const outcome = await runManifest(base, {});
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stderr).toMatch(/^interlock manifest: warning: no --api-server-cidr: .* port 8443 to every source/m);
    const policy = outcome.stdout.split('\n---\n').find((text) => /^kind: NetworkPolicy$/m.test(text))!;
    expect(policy).toMatch(/^# WARNING: no --api-server-cidr/m);
    // The YAML stays what kubectl applies: the warning is a comment.
    expect(parseAllDocuments(outcome.stdout).every((document) => document.errors.length === 0)).toBe(true);
  });

  it('with --api-server-cidr: neither', async () => {
    const outcome = await runManifest([...base, '--api-server-cidr', '192.0.2.0/24'], {});
    expect(outcome.stderr).not.toMatch(/api-server-cidr/);
    expect(outcome.stdout).not.toMatch(/WARNING/);
  });
});
