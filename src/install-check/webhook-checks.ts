import { DEFAULT_IMAGE } from '../inject/validator-container.js';
import { WEBHOOK_CONFIGURATION_NAME, WEBHOOK_NAME, WEBHOOK_TLS_SECRET } from '../webhook/webhook-manifest.js';
import { EXPIRY_WARNING_DAYS, expiryDate, firstCertificate, signedBy, type CertificateFacts } from './certificate.js';
import { at, count, list, text } from './json-path.js';
import { namespaceLabels, selects } from './label-selector.js';
import { installCheck, type InstallCheckResult, type InstallPart } from './install-check-result.js';
import { valueOf, type Found, type InstallSnapshot } from './install-snapshot.js';

/**
 * The line that prints the webhook again with what the cluster says it was installed with: its
 * namespace, image and failure policy, and, when its CA was given rather than cert-manager's, that
 * CA read back from the configuration into a file --ca-bundle takes.
 */
function reinstall(snapshot: InstallSnapshot): string {
  const configuration = valueOf(snapshot.configuration);
  const image = text(at(valueOf(snapshot.deployment), 'spec', 'template', 'spec', 'containers', 0, 'image'));
  const policy = text(at(configuration, 'webhooks', 0, 'failurePolicy'));
  const ownCa =
    configuration !== undefined &&
    text(at(configuration, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from')) === undefined &&
    text(at(configuration, 'webhooks', 0, 'clientConfig', 'caBundle')) !== undefined;
  const readCa = `kubectl get mutatingwebhookconfiguration ${WEBHOOK_CONFIGURATION_NAME} -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d > interlock-ca.crt && `;
  const flags = [
    `--namespace ${snapshot.webhookNamespace}`,
    `--image ${image ?? DEFAULT_IMAGE}`,
    ...(policy === 'Fail' ? ['--failure-policy Fail'] : []),
    ...(ownCa ? ['--ca-bundle interlock-ca.crt'] : []),
  ];
  return `${ownCa ? readCa : ''}interlock manifest --webhook ${flags.join(' ')} | kubectl apply -f -`;
}

/** Read failures are checks that fail too: a check that could not look has not passed. */
export function unreadable(part: InstallPart, id: string, what: string, found: Found): InstallCheckResult {
  const detail = found.state === 'forbidden' || found.state === 'error' ? found.detail : '';
  return found.state === 'forbidden'
    ? installCheck(
        part,
        id,
        'fail',
        `${what} cannot be read: ${detail}`,
        'run check as a user who may read it (kubectl auth can-i get ...)',
      )
    : installCheck(part, id, 'fail', `${what} cannot be read: ${detail}`);
}

/** Whether anything of the webhook is installed; when nothing is, its checks are skipped, not failed. */
export function webhookInstalled(snapshot: InstallSnapshot): boolean {
  return [snapshot.configuration, snapshot.deployment, snapshot.service].some((found) => found.state !== 'absent');
}

export function webhookChecks(snapshot: InstallSnapshot): InstallCheckResult[] {
  if (!webhookInstalled(snapshot))
    return [
      installCheck(
        'webhook',
        'installed',
        'skip',
        `not installed (no ${WEBHOOK_CONFIGURATION_NAME})`,
        reinstall(snapshot),
      ),
    ];
  const ns = snapshot.webhookNamespace;
  const caBundle = text(at(valueOf(snapshot.configuration), 'webhooks', 0, 'clientConfig', 'caBundle'));
  const ca =
    caBundle === undefined
      ? undefined
      : firstCertificate(Buffer.from(caBundle, 'base64').toString('utf8'), snapshot.now);
  return [
    configurationCheck(snapshot),
    namespaceSelectorCheck(snapshot),
    objectCheck(snapshot, snapshot.service, `Service ${ns}/${WEBHOOK_NAME}`, 'service'),
    endpointsCheck(snapshot),
    deploymentCheck(snapshot),
    caBundleCheck(ca),
    servingCertificateCheck(snapshot, typeof ca === 'object' ? ca : undefined),
  ];
}

function configurationCheck(snapshot: InstallSnapshot): InstallCheckResult {
  const found = snapshot.configuration;
  const name = `MutatingWebhookConfiguration ${WEBHOOK_CONFIGURATION_NAME}`;
  if (found.state === 'absent')
    return installCheck(
      'webhook',
      'configuration',
      'fail',
      `${name} does not exist, but other webhook objects do`,
      reinstall(snapshot),
    );
  if (found.state !== 'found') return unreadable('webhook', 'configuration', name, found);
  const webhook = at(found.value, 'webhooks', 0);
  const service = at(webhook, 'clientConfig', 'service');
  const target = `${text(at(service, 'namespace'))}/${text(at(service, 'name'))}`;
  const policy = text(at(webhook, 'failurePolicy')) ?? 'Fail';
  if (target !== `${snapshot.webhookNamespace}/${WEBHOOK_NAME}`)
    return installCheck(
      'webhook',
      'configuration',
      'fail',
      `${name} calls Service ${target}, not ${snapshot.webhookNamespace}/${WEBHOOK_NAME}`,
      reinstall(snapshot),
    );
  return installCheck(
    'webhook',
    'configuration',
    'pass',
    `${name} calls Service ${target}${text(at(service, 'path')) ?? ''} (failurePolicy ${policy})`,
  );
}

function namespaceSelectorCheck(snapshot: InstallSnapshot): InstallCheckResult {
  const selector = at(valueOf(snapshot.configuration), 'webhooks', 0, 'namespaceSelector');
  if (snapshot.configuration.state !== 'found')
    return installCheck('webhook', 'namespaces', 'skip', 'no configuration to read the namespaceSelector from');
  if (snapshot.namespaces.state !== 'found')
    return unreadable('webhook', 'namespaces', 'the namespaces', snapshot.namespaces);
  const all = list(at(snapshot.namespaces.value, 'items'));
  const chosen = all
    .filter((namespace) => selects(selector ?? {}, namespaceLabels(namespace)))
    .map((namespace) => text(at(namespace, 'metadata', 'name')) ?? '');
  const names = chosen.length > 8 ? `${chosen.slice(0, 8).join(', ')}, ...` : chosen.join(', ');
  if (chosen.length === 0)
    return installCheck(
      'webhook',
      'namespaces',
      'warn',
      `selects none of the ${all.length} namespaces: no pod is sent to it`,
      'check --canary-namespace and the namespaceSelector (kubectl get mutatingwebhookconfiguration -o yaml)',
    );
  return installCheck(
    'webhook',
    'namespaces',
    'pass',
    `selects ${chosen.length} of ${all.length} namespaces: ${names}`,
  );
}

function objectCheck(snapshot: InstallSnapshot, found: Found, name: string, id: string): InstallCheckResult {
  if (found.state === 'found') return installCheck('webhook', id, 'pass', `${name} exists`);
  if (found.state === 'absent')
    return installCheck(
      'webhook',
      id,
      'fail',
      `${name} does not exist: the API server cannot reach the webhook`,
      reinstall(snapshot),
    );
  return unreadable('webhook', id, name, found);
}

function endpointsCheck(snapshot: InstallSnapshot): InstallCheckResult {
  const name = `Service ${snapshot.webhookNamespace}/${WEBHOOK_NAME}`;
  const found = snapshot.endpoints;
  if (found.state !== 'found' && found.state !== 'absent')
    return unreadable('webhook', 'endpoints', `the endpoints of ${name}`, found);
  const subsets = list(at(valueOf(found), 'subsets'));
  const ready = subsets.reduce<number>((sum, subset) => sum + list(at(subset, 'addresses')).length, 0);
  const notReady = subsets.reduce<number>((sum, subset) => sum + list(at(subset, 'notReadyAddresses')).length, 0);
  if (ready > 0)
    return installCheck('webhook', 'endpoints', 'pass', `${name} has ${ready} ready endpoint${ready === 1 ? '' : 's'}`);
  const policy = text(at(valueOf(snapshot.configuration), 'webhooks', 0, 'failurePolicy')) ?? 'Fail';
  const effect =
    policy === 'Fail' ? 'pod creation in the selected namespaces is refused' : 'pods are admitted without Interlock';
  return installCheck(
    'webhook',
    'endpoints',
    'fail',
    `${name} has no ready endpoint${notReady > 0 ? ` (${notReady} not ready)` : ''}: ${effect}`,
    `kubectl -n ${snapshot.webhookNamespace} get pods -l app.kubernetes.io/name=${WEBHOOK_NAME}; kubectl -n ${snapshot.webhookNamespace} describe deployment ${WEBHOOK_NAME}`,
  );
}

function deploymentCheck(snapshot: InstallSnapshot): InstallCheckResult {
  const name = `Deployment ${snapshot.webhookNamespace}/${WEBHOOK_NAME}`;
  const found = snapshot.deployment;
  if (found.state === 'absent')
    return installCheck('webhook', 'deployment', 'fail', `${name} does not exist`, reinstall(snapshot));
  if (found.state !== 'found') return unreadable('webhook', 'deployment', name, found);
  const desired = count(at(found.value, 'spec', 'replicas') ?? 1);
  const ready = count(at(found.value, 'status', 'readyReplicas'));
  if (ready >= desired && desired > 0)
    return installCheck('webhook', 'deployment', 'pass', `${name}: ${ready} of ${desired} replicas ready`);
  return installCheck(
    'webhook',
    'deployment',
    ready > 0 ? 'warn' : 'fail',
    `${name}: ${ready} of ${desired} replicas ready`,
    `kubectl -n ${snapshot.webhookNamespace} describe deployment ${WEBHOOK_NAME}`,
  );
}

function caBundleCheck(ca: CertificateFacts | string | undefined): InstallCheckResult {
  if (ca === undefined)
    return installCheck(
      'webhook',
      'ca-bundle',
      'fail',
      'the configuration has no caBundle: the API server cannot verify the webhook, so every call fails',
      'kubectl apply -f https://github.com/cert-manager/cert-manager/releases/latest/download/cert-manager.yaml  # it injects the CA from the Certificate; or print the webhook with --ca-bundle and your CA',
    );
  if (typeof ca === 'string')
    return installCheck(
      'webhook',
      'ca-bundle',
      'fail',
      `the caBundle: ${ca}`,
      'print the webhook again with --ca-bundle naming a file that holds the CA in PEM',
    );
  return expiryCheck('ca-bundle', `the caBundle's CA (${ca.subject})`, ca);
}

function expiryCheck(id: string, what: string, facts: CertificateFacts): InstallCheckResult {
  const renew = 'cert-manager renews it by itself; otherwise issue a new one and re-apply (docs/operator.md)';
  if (facts.daysLeft < 0) return installCheck('webhook', id, 'fail', `${what} expired on ${expiryDate(facts)}`, renew);
  if (facts.daysLeft < EXPIRY_WARNING_DAYS)
    return installCheck(
      'webhook',
      id,
      'warn',
      `${what} expires on ${expiryDate(facts)}, in ${facts.daysLeft} days`,
      renew,
    );
  return installCheck('webhook', id, 'pass', `${what} valid until ${expiryDate(facts)} (${facts.daysLeft} days)`);
}

function servingCertificateCheck(snapshot: InstallSnapshot, ca: CertificateFacts | undefined): InstallCheckResult {
  const name = `Secret ${snapshot.webhookNamespace}/${WEBHOOK_TLS_SECRET}`;
  const found = snapshot.tlsSecret;
  if (found.state === 'absent')
    return installCheck(
      'webhook',
      'certificate',
      'fail',
      `${name} does not exist: the webhook's pods cannot start`,
      `with cert-manager: kubectl describe certificate -n ${snapshot.webhookNamespace} ${WEBHOOK_NAME}; without: create the Secret ${WEBHOOK_TLS_SECRET} (tls.crt, tls.key)`,
    );
  if (found.state !== 'found') return unreadable('webhook', 'certificate', name, found);
  const pem = Buffer.from(text(at(found.value, 'data', 'tls.crt')) ?? '', 'base64').toString('utf8');
  const serving = firstCertificate(pem, snapshot.now);
  if (typeof serving === 'string') return installCheck('webhook', 'certificate', 'fail', `${name} tls.crt: ${serving}`);
  const host = `${WEBHOOK_NAME}.${snapshot.webhookNamespace}.svc`;
  if (!serving.dnsNames.includes(host))
    return installCheck(
      'webhook',
      'certificate',
      'fail',
      `the serving certificate in ${name} does not name ${host} (it names ${serving.dnsNames.join(', ') || 'no DNS name'})`,
      'reissue it for the Service name',
    );
  if (ca && !signedBy(serving.certificate, ca.certificate))
    return installCheck(
      'webhook',
      'certificate',
      'fail',
      `the serving certificate in ${name} is not signed by the caBundle's CA: the API server refuses its TLS`,
      'make the caBundle the CA that signed tls.crt (cert-manager: the inject-ca-from annotation)',
    );
  return expiryCheck('certificate', `the serving certificate for ${host}`, serving);
}
