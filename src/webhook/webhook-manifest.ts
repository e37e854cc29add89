import { ADMISSION_OPT_OUT, interlockLabels } from '../kube/interlock-labels.js';
import { workloadSecurityContext } from '../kube/workload-security-context.js';
import { LINUX_NODES, pullSecretFields } from '../kube/pod-placement.js';
import type { Platform } from '../config/platform.js';
import type { CapturedPods } from '../mesh/mesh-identity.js';
import { SCOPE_PATHS } from './admit.js';
import { WEBHOOK_MEMORY_LIMIT_MIB } from './webhook-budget.js';

export interface WebhookManifestOptions {
  readonly image: string;
  /** openshift: the webhook's container has no uid, and it gives the validators it writes none. */
  readonly platform?: Platform;
  readonly namespace: string;
  readonly failurePolicy: 'Ignore' | 'Fail';
  /** The CA that signed the serving certificate, PEM; without it cert-manager issues and injects it. */
  readonly caBundlePem?: string;
  /** Namespaces never sent to the webhook, beside kube-system and its own (`--exempt-namespaces`). */
  readonly exemptNamespaces?: readonly string[];
  /** Only pods created in this namespace are sent to the webhook. */
  readonly canaryNamespace?: string;
  /** The namespace whose pods may scrape the metrics port. */
  readonly metricsNamespace: string;
  /** The API servers' addresses: the only sources of the webhook port; unset, any source. */
  readonly apiServerCidrs?: readonly string[];
  /** The CA of the API server's client certificate: the webhook then requires one (--client-ca). */
  readonly clientCaPem?: string;
  /** With clientCaPem: the names the client certificate must carry (--client-name). */
  readonly clientNames?: readonly string[];
  /** Also add Interlock's validator to the pods a node dataplane captures (`--mesh istio-ambient`): its selection. */
  readonly capturedPods?: CapturedPods;
  /** Secrets of the webhook's namespace its pods pull the image with. */
  readonly imagePullSecrets?: readonly string[];
}

type Document = Record<string, unknown>;

const NAME = 'interlock-webhook';
/**
 * The API server calls mutating webhook configurations in the order of their names, and calls one
 * again (reinvocationPolicy IfNeeded) when a later one changed the pod. `zz-` sorts after the
 * meshes' injectors (istio-sidecar-injector, linkerd-proxy-injector-webhook-config), so the pod
 * normally arrives already injected, and reinvocation covers any injector named later.
 */
const CONFIGURATION_NAME = `zz-${NAME}`;
const TLS_SECRET = `${NAME}-tls`;
/** At most 5 s: every pod creation in the selected namespaces waits on it (the webhook answers within --request-deadline, 2 s). */
const TIMEOUT_SECONDS = 5;
const PORT = 8443;
const METRICS_PORT = 9090;
const CLIENT_CA = { configMap: `${NAME}-client-ca`, dir: '/etc/interlock/client-ca', file: 'ca.crt' } as const;
/**
 * What the Service, the Deployment and the PodDisruptionBudget select: as in the first release,
 * since a Deployment's selector cannot change on upgrade. A fresh object each time: a shared one
 * would print as YAML anchors.
 */
const labels = () => ({ 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/part-of': 'interlock' });
const allLabels = () => interlockLabels(NAME, 'webhook');
/** Opt a workload out: `interlock.dev/admission: disabled` on the pod template. */
const OPT_OUT_LABEL = ADMISSION_OPT_OUT.key;
export const WEBHOOK_NAME = NAME;
export const WEBHOOK_CONFIGURATION_NAME = CONFIGURATION_NAME;
export const WEBHOOK_TLS_SECRET = TLS_SECRET;
/**
 * Its own namespace, apart from the node agent's: `kubectl delete -f` of one output deletes its
 * Namespace and with it everything inside, so a shared one would take the other part with it.
 * The webhook meets PodSecurity `restricted`; the agent's namespace must be `privileged`.
 */
export const WEBHOOK_NAMESPACE = 'interlock-webhook';

/** Every document `interlock manifest --webhook` prints, in the order they apply. */
export function webhookManifest(options: WebhookManifestOptions): Document[] {
  const meta = (extra: Document = {}) => ({ name: NAME, namespace: options.namespace, labels: allLabels(), ...extra });
  return [
    // First: kubectl applies in file order, and every namespaced object below needs it.
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: options.namespace,
        labels: { ...allLabels(), 'pod-security.kubernetes.io/enforce': 'restricted' },
      },
    },
    // Its one call: at start, a get on its own pod to learn the image it injects (its own).
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(), automountServiceAccountToken: false },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(),
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: NAME },
      subjects: [{ kind: 'ServiceAccount', name: NAME, namespace: options.namespace }],
    },
    ...(options.caBundlePem === undefined ? certManagerDocuments(options.namespace, meta) : []),
    ...(options.clientCaPem === undefined
      ? []
      : [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { ...meta(), name: CLIENT_CA.configMap },
            data: { [CLIENT_CA.file]: options.clientCaPem },
          },
        ]),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(),
      spec: { selector: labels(), ports: [{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }] },
    },
    deployment(options, meta()),
    networkPolicy(options, meta()),
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: meta(),
      spec: { minAvailable: 1, selector: { matchLabels: labels() } },
    },
    webhookConfiguration(options),
  ];
}

function certManagerDocuments(namespace: string, meta: (extra?: Document) => Document): Document[] {
  const service = `${NAME}.${namespace}.svc`;
  return [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { ...meta(), name: `${NAME}-selfsigned` },
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: meta(),
      spec: {
        secretName: TLS_SECRET,
        dnsNames: [service, `${service}.cluster.local`],
        duration: '2160h',
        renewBefore: '360h',
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
        issuerRef: { name: `${NAME}-selfsigned`, kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
  ];
}

/** --client-ca on the mounted ConfigMap, and --client-name with it. */
function clientAuthArgs(options: WebhookManifestOptions): string[] {
  if (options.clientCaPem === undefined) return [];
  const names = options.clientNames === undefined ? [] : [`--client-name=${options.clientNames.join(',')}`];
  return [`--client-ca=${CLIENT_CA.dir}/${CLIENT_CA.file}`, ...names];
}

function webhookContainer(options: WebhookManifestOptions): Document {
  // On the metrics port: the kubelet presents no client certificate, which --client-ca requires.
  const probe = (path: string) => ({
    httpGet: { path, port: 'metrics', scheme: 'HTTP' },
    periodSeconds: 5,
    failureThreshold: 3,
  });
  const container = {
    name: 'webhook',
    image: options.image,
    command: ['interlock'],
    // No --image: the webhook injects its own image, read from its pod (POD_NAME), so that
    // kustomize's `images:` or `kubectl set image` changes both; an argument would be left behind.
    args: [
      'webhook',
      ...(options.platform === 'openshift' ? ['--platform=openshift'] : []),
      `--bind=0.0.0.0:${PORT}`,
      `--metrics-bind=0.0.0.0:${METRICS_PORT}`,
    ].concat(clientAuthArgs(options)),
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ],
    ports: [
      { name: 'https', containerPort: PORT, protocol: 'TCP' },
      { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
    ],
    livenessProbe: probe('/healthz'),
    readinessProbe: probe('/readyz'),
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: `${WEBHOOK_MEMORY_LIMIT_MIB}Mi` } },
    volumeMounts: [
      { name: 'tls', mountPath: '/etc/interlock/tls', readOnly: true },
      ...(options.clientCaPem === undefined ? [] : [{ name: 'client-ca', mountPath: CLIENT_CA.dir, readOnly: true }]),
    ],
    securityContext: workloadSecurityContext(options.platform),
  };
  return container;
}

function deployment(options: WebhookManifestOptions, metadata: Document): Document {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: 2,
      selector: { matchLabels: labels() },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: allLabels() },
        spec: {
          serviceAccountName: NAME,
          // The token for the get on its own pod (the Role above); the ServiceAccount mounts none elsewhere.
          automountServiceAccountToken: true,
          nodeSelector: { ...LINUX_NODES },
          ...pullSecretFields(options.imagePullSecrets),
          // Longer than --drain-timeout (20 s): in-flight admissions finish before SIGKILL.
          terminationGracePeriodSeconds: 30,
          affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [antiAffinity()] } },
          containers: [webhookContainer(options)],
          volumes: [
            { name: 'tls', secret: { secretName: TLS_SECRET } },
            ...(options.clientCaPem === undefined
              ? []
              : [{ name: 'client-ca', configMap: { name: CLIENT_CA.configMap } }]),
          ],
        },
      },
    },
  };
}

/**
 * Without --api-server-cidr the printed NetworkPolicy lets every source reach the admission port:
 * any pod can then hold its connections, and with failurePolicy Ignore an unanswered admission
 * admits a pod with no validator at all (ambient pods have no mesh validator to fall back on).
 * Its egress is then open to any address on the API server's ports: a compromised webhook could
 * reach any service listening on 443 or 6443, so the warning says that too.
 */
export const OPEN_ADMISSION_PORT_WARNING = `no --api-server-cidr: the NetworkPolicy opens the admission port ${PORT} to every source in the cluster, and lets the webhook connect to any address on TCP 443 and 6443 (it reads its own pod from the API server). Give the API server's addresses (--api-server-cidr CIDR[,CIDR]) so only it can connect and only it is reached; with failurePolicy Ignore a webhook kept busy admits pods with no validator at all.`;

/**
 * Only what must reach the webhook does: the API server to the admission port (from its addresses
 * when given: it is not a pod a selector can name) and the metrics namespace to the metrics port.
 * Egress only to the API server (its addresses when given, else TCP 443 and 6443: the Service's
 * port and the common endpoint port), for the get on its own pod; no DNS (the in-cluster address
 * is an IP). The kubelet's probes come from the node, which the common CNIs let through whatever
 * the policy says (docs/admission.md).
 */
function networkPolicy(options: WebhookManifestOptions, metadata: Document): Document {
  const apiServers = options.apiServerCidrs?.map((cidr) => ({ ipBlock: { cidr } }));
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata,
    spec: {
      podSelector: { matchLabels: labels() },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        { ...(apiServers ? { from: apiServers } : {}), ports: [{ protocol: 'TCP', port: PORT }] },
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': options.metricsNamespace } } }],
          ports: [{ protocol: 'TCP', port: METRICS_PORT }],
        },
      ],
      egress: [
        apiServers
          ? { to: apiServers }
          : {
              ports: [
                { protocol: 'TCP', port: 443 },
                { protocol: 'TCP', port: 6443 },
              ],
            },
      ],
    },
  };
}

function antiAffinity(): Document {
  return {
    weight: 100,
    podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels() } },
  };
}

function webhookConfiguration(options: WebhookManifestOptions): Document {
  const exempt = ['kube-system', options.namespace, ...(options.exemptNamespaces ?? [])];
  const notIn = { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...new Set(exempt)] };
  const canary = options.canaryNamespace
    ? [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [options.canaryNamespace] }]
    : [];
  const caBundle =
    options.caBundlePem === undefined ? {} : { caBundle: Buffer.from(options.caBundlePem).toString('base64') };
  const optOut = { key: OPT_OUT_LABEL, operator: 'NotIn', values: [ADMISSION_OPT_OUT.value] };
  const entry = (name: string, path: string, namespaceSelector: Document, objectSelector: Document) => ({
    name,
    admissionReviewVersions: ['v1'],
    clientConfig: { service: { name: NAME, namespace: options.namespace, path, port: 443 }, ...caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
    namespaceSelector,
    objectSelector,
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: TIMEOUT_SECONDS,
    failurePolicy: options.failurePolicy,
    reinvocationPolicy: 'IfNeeded',
  });
  const namespaces = (...extra: Document[]) => ({ matchExpressions: [notIn, ...canary, ...extra] });
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: {
      name: CONFIGURATION_NAME,
      labels: allLabels(),
      ...(options.caBundlePem === undefined
        ? { annotations: { 'cert-manager.io/inject-ca-from': `${options.namespace}/${NAME}` } }
        : {}),
    },
    webhooks: [
      entry('validator.webhook.interlock.dev', SCOPE_PATHS.validators, namespaces(), { matchExpressions: [optOut] }),
      ...(options.capturedPods ? ambientEntries(options.capturedPods, entry, namespaces, optOut) : []),
    ],
  };
}

type Entry = (name: string, path: string, namespaceSelector: Document, objectSelector: Document) => Document;

/**
 * The review carries the pod but not its namespace's labels, and the webhook calls no API: the
 * API server evaluates ambient's selection instead, in two entries that Istio's own injector
 * also uses to say "namespace label, unless the pod opts out; else the pod's label": a namespace
 * labelled ambient sends every pod not labelled `none`; any other namespace sends a pod labelled
 * ambient. Disjoint, so no pod is sent twice. The webhook still checks the pod (sidecar, `none`).
 */
function ambientEntries(
  selection: CapturedPods,
  entry: Entry,
  namespaces: (...extra: Document[]) => Document,
  optOut: Document,
): Document[] {
  const { label, on: ambient, off: none } = selection;
  return [
    entry(
      'ambient-namespace.webhook.interlock.dev',
      SCOPE_PATHS.ambient,
      namespaces({ key: label, operator: 'In', values: [ambient] }),
      { matchExpressions: [optOut, { key: label, operator: 'NotIn', values: [none] }] },
    ),
    entry(
      'ambient-pod.webhook.interlock.dev',
      SCOPE_PATHS.ambient,
      namespaces({ key: label, operator: 'NotIn', values: [ambient] }),
      { matchExpressions: [optOut, { key: label, operator: 'In', values: [ambient] }] },
    ),
  ];
}
