import { DEFAULT_IMAGE } from '../inject/validator-container.js';
import { failClosedExemptions } from '../mesh/fail-closed-exemptions.js';
import { parse as parseYaml } from 'yaml';
import { webhookManifest } from '../webhook/webhook-manifest.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { valueOf, type Found } from './install-snapshot.js';
import { at, count, list, record, text } from './json-path.js';
import { namespaceLabels, selects } from './label-selector.js';
import { meshCniFacts, type MeshCniFacts } from './mesh-cni-facts.js';
import { podSecurityChecks } from './pod-security-preflight.js';
import type { PreflightSnapshot } from './preflight-snapshot.js';
import { unreadable } from './webhook-checks.js';

const first = (found: Found): unknown => list(at(valueOf(found), 'items'))[0];
const namespaceOf = (object: unknown) => text(at(object, 'metadata', 'namespace'));

/** `interlock check --pre`: what an install needs of the cluster, asked before it is made. */
export function preflightChecks(snapshot: PreflightSnapshot): InstallCheckResult[] {
  return [
    ...cniChecks(snapshot),
    ...(snapshot.plan.parts.webhook ? [certificateCheck(snapshot)] : []),
    ...(snapshot.plan.monitoring ? [monitoringCheck(snapshot)] : []),
    ...podSecurityChecks(snapshot),
    ...(snapshot.plan.parts.webhook && snapshot.plan.failurePolicy === 'Fail' ? [failurePolicyCheck(snapshot)] : []),
  ];
}

function cniChecks(snapshot: PreflightSnapshot): InstallCheckResult[] {
  const { mesh } = snapshot.plan;
  const facts = mesh === undefined ? undefined : meshCniFacts(mesh);
  if (mesh === undefined || facts === undefined)
    return [
      installCheck(
        'preflight',
        'cni',
        'skip',
        mesh ? `no CNI mode to check for ${mesh}` : 'no --mesh: CNI mode not checked',
      ),
    ];
  if (snapshot.cniDaemonSets.state !== 'found')
    return [unreadable('preflight', 'cni', 'the DaemonSets', snapshot.cniDaemonSets)];
  const daemonSet = first(snapshot.cniDaemonSets);
  const results = [daemonSetCheck(facts, daemonSet)];
  return facts.config ? [...results, modeCheck(facts, snapshot.meshConfigs)] : results;
}

function daemonSetCheck(facts: MeshCniFacts, daemonSet: unknown): InstallCheckResult {
  if (daemonSet === undefined)
    return installCheck(
      'preflight',
      'cni',
      'fail',
      `no DaemonSet ${facts.daemonSet}: the mesh's CNI plugin is not installed, and Interlock checks what it sets up`,
      facts.installCni,
    );
  const name = `DaemonSet ${namespaceOf(daemonSet) ?? ''}/${facts.daemonSet}`;
  const desired = count(at(daemonSet, 'status', 'desiredNumberScheduled'));
  const ready = count(at(daemonSet, 'status', 'numberReady'));
  const summary = `${name}: ${ready} of ${desired} scheduled pods ready`;
  if (desired > 0 && ready >= desired) return installCheck('preflight', 'cni', 'pass', summary);
  return installCheck(
    'preflight',
    'cni',
    'fail',
    summary,
    `kubectl -n ${namespaceOf(daemonSet) ?? ''} describe daemonset ${facts.daemonSet}`,
  );
}

function modeCheck(facts: MeshCniFacts, configs: Found): InstallCheckResult {
  const config = facts.config!;
  if (configs.state !== 'found') return unreadable('preflight', 'cni-mode', 'the ConfigMaps', configs);
  const map = first(configs);
  if (map === undefined)
    return installCheck(
      'preflight',
      'cni-mode',
      'fail',
      `no ConfigMap ${config.configMap}: the mesh's control plane is not installed`,
    );
  const where = `${namespaceOf(map) ?? ''}/${config.configMap}`;
  const raw = record(at(map, 'data'))[config.key] ?? '';
  let values: unknown;
  try {
    values = config.format === 'json' ? JSON.parse(raw) : parseYaml(raw);
  } catch {
    return installCheck('preflight', 'cni-mode', 'fail', `ConfigMap ${where}: its ${config.key} cannot be parsed`);
  }
  const enabled = at(values, ...config.path);
  const setting = `${config.path.join('.')}: ${JSON.stringify(enabled ?? null)}`;
  if (enabled === true)
    return installCheck('preflight', 'cni-mode', 'pass', `ConfigMap ${where} says CNI mode (${setting})`);
  return installCheck(
    'preflight',
    'cni-mode',
    'fail',
    `ConfigMap ${where} says ${setting}: the mesh writes the rules from an init container and renders no validator for Interlock to stand in for`,
    facts.enableCni,
  );
}

function certificateCheck(snapshot: PreflightSnapshot): InstallCheckResult {
  if (snapshot.plan.caBundle)
    return installCheck(
      'preflight',
      'certificates',
      'pass',
      '--ca-bundle given: the webhook serves a certificate you issue',
    );
  const api = snapshot.certManagerApi;
  if (api.state === 'found')
    return installCheck(
      'preflight',
      'certificates',
      'pass',
      "cert-manager's API (cert-manager.io/v1) is served: it issues the webhook's certificate",
    );
  if (api.state !== 'absent') return unreadable('preflight', 'certificates', 'cert-manager.io/v1', api);
  return installCheck(
    'preflight',
    'certificates',
    'fail',
    "cert-manager's CRDs are not installed and no --ca-bundle is given: nothing would issue the webhook's certificate",
    'kubectl apply -f https://github.com/cert-manager/cert-manager/releases/latest/download/cert-manager.yaml  # or: interlock manifest --webhook --ca-bundle FILE',
  );
}

function monitoringCheck(snapshot: PreflightSnapshot): InstallCheckResult {
  const api = snapshot.monitoringApi;
  if (api.state !== 'found' && api.state !== 'absent')
    return unreadable('preflight', 'monitoring', 'monitoring.coreos.com/v1', api);
  const served = list(at(valueOf(api), 'resources')).map((resource) => text(at(resource, 'name')));
  const missing = ['podmonitors', 'prometheusrules'].filter((name) => !served.includes(name));
  if (missing.length === 0)
    return installCheck(
      'preflight',
      'monitoring',
      'pass',
      "the Prometheus Operator's PodMonitor and PrometheusRule are served",
    );
  return installCheck(
    'preflight',
    'monitoring',
    'fail',
    `--monitoring prints ${missing.join(' and ')}, which this cluster does not serve (monitoring.coreos.com/v1): the apply fails`,
    'kubectl apply --server-side -f https://github.com/prometheus-operator/prometheus-operator/releases/latest/download/bundle.yaml  # or drop --monitoring',
  );
}

/** The namespaces a failurePolicy Fail webhook would hold hostage: those it selects that run what it depends on. */
function failurePolicyCheck(snapshot: PreflightSnapshot): InstallCheckResult {
  if (snapshot.namespaces.state !== 'found')
    return unreadable('preflight', 'failure-policy', 'the namespaces', snapshot.namespaces);
  const hosts = new Map<string, string[]>();
  const host = (namespace: string | undefined, what: string) => {
    if (namespace !== undefined) hosts.set(namespace, [...(hosts.get(namespace) ?? []), what]);
  };
  host(namespaceOf(first(snapshot.meshConfigs)), "the mesh's control plane");
  host(namespaceOf(first(snapshot.cniDaemonSets)), "the mesh's CNI plugin");
  host(namespaceOf(first(snapshot.certManagerDeployments)), 'cert-manager');
  const configuration = webhookManifest({
    image: snapshot.plan.image ?? 'mesh-interlock:dev',
    namespace: snapshot.plan.webhookNamespace,
    failurePolicy: 'Fail',
    exemptNamespaces: failClosedExemptions(),
    metricsNamespace: snapshot.plan.webhookNamespace,
  }).find((document) => document['kind'] === 'MutatingWebhookConfiguration');
  const selectors = list(at(configuration, 'webhooks')).map((webhook) => at(webhook, 'namespaceSelector'));
  const heldNames = list(at(snapshot.namespaces.value, 'items'))
    .filter((item) => selectors.some((selector) => selects(selector, namespaceLabels(item))))
    .map((item) => text(at(item, 'metadata', 'name')) ?? '')
    .filter((name) => hosts.has(name));
  const held = heldNames.map((name) => `${name} (${(hosts.get(name) ?? []).join(', ')})`);
  if (held.length === 0)
    return installCheck(
      'preflight',
      'failure-policy',
      'pass',
      `--failure-policy Fail selects no namespace of the mesh, its CNI or cert-manager (${[...hosts.keys()].join(', ') || 'none found'}; left out by default: ${failClosedExemptions().join(', ')})`,
    );
  return installCheck(
    'preflight',
    'failure-policy',
    'fail',
    `--failure-policy Fail would still select ${held.join(', ')}: while the webhook is down no pod starts there, and the webhook waits on them`,
    `interlock manifest --webhook --failure-policy Fail --exempt-namespaces ${[...failClosedExemptions(), ...heldNames].join(',')} --image ${snapshot.plan.image ?? DEFAULT_IMAGE} | kubectl apply -f -`,
  );
}
