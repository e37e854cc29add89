import type { DefaultedFlag, FlagDef } from '../../../config/flag-def.js';
import { failClosedExemptions } from '../../../mesh/fail-closed-exemptions.js';
import {
  oneOf,
  parseCidrTexts,
  parseNameList,
  parseNamespaceName,
  parseNamespaceNames,
  parseNonBlank,
  parseSwitch,
} from '../../../config/flag-parsers.js';

// These flags are argv only (no `env`): what `manifest --webhook` prints is what its command line says.

const WEBHOOK_SWITCH: FlagDef<boolean> = {
  name: 'webhook',
  kind: 'switch',
  help: 'Print the admission webhook (Deployment, PDB, Service, ServiceAccount, MutatingWebhookConfiguration; docs/admission.md).',
  parse: parseSwitch,
};

export const CA_BUNDLE_FLAG: FlagDef<string> = {
  name: 'ca-bundle',
  kind: 'value',
  placeholder: 'FILE',
  help: "With --webhook: the PEM CA of the webhook's serving certificate, written as caBundle (default: cert-manager issues the certificate and injects its CA).",
  parse: parseNonBlank('expected a file path'),
};

export const FAILURE_POLICY_FLAG: DefaultedFlag<'Ignore' | 'Fail'> = {
  name: 'failure-policy',
  kind: 'value',
  placeholder: 'Ignore|Fail',
  help: "With --webhook: what the API server does when the webhook does not answer (default {default}: the pod keeps the mesh's own validator).",
  parse: oneOf(['Ignore', 'Fail'], { say: 'or', exact: true }),
  default: 'Ignore',
};

export const EXEMPT_NAMESPACES_FLAG: FlagDef<string[]> = {
  name: 'exempt-namespaces',
  kind: 'value',
  placeholder: 'NS[,NS]',
  help: `With --webhook: namespaces never sent to it, beside kube-system and its own. With --failure-policy Fail the default is ${failClosedExemptions().join(', ')}: cert-manager and the meshes' control planes and CNI plugins, whose repair a webhook outage must not block. A list replaces it (name those too to extend it).`,
  parse: parseNamespaceNames,
};

export const CANARY_NAMESPACE_FLAG: FlagDef<string> = {
  name: 'canary-namespace',
  kind: 'value',
  placeholder: 'NS',
  help: 'With --webhook: send only pods created in this namespace to the webhook (a canary).',
  parse: parseNamespaceName,
};

export const API_SERVER_CIDR_FLAG: FlagDef<string[]> = {
  name: 'api-server-cidr',
  kind: 'value',
  placeholder: 'CIDR[,CIDR...]',
  help: "With --webhook: the API servers' addresses, the only sources the NetworkPolicy lets reach the webhook port and the only destinations it lets the webhook reach (default: any address, TCP 443 and 6443 out; the API server is not a pod a selector can name).",
  parse: parseCidrTexts,
};

export const METRICS_NAMESPACE_FLAG: DefaultedFlag<string> = {
  name: 'metrics-namespace',
  kind: 'value',
  placeholder: 'NS',
  help: 'With --webhook: the namespace whose pods (Prometheus) the NetworkPolicy lets scrape the metrics port (default {default}).',
  parse: parseNamespaceName,
  default: 'monitoring',
};

export const WEBHOOK_CLIENT_CA_FLAG: FlagDef<string> = {
  name: 'webhook-client-ca',
  kind: 'value',
  placeholder: 'FILE',
  help: "With --webhook: the PEM CA of the API server's client certificate; the webhook then refuses callers without one (docs/admission.md: the API server's admission kubeconfig).",
  parse: parseNonBlank('expected a file path'),
};

export const WEBHOOK_CLIENT_NAME_FLAG: FlagDef<readonly string[]> = {
  name: 'webhook-client-name',
  kind: 'value',
  placeholder: 'NAME[,NAME]',
  help: "With --webhook-client-ca: the names (CN or DNS SAN) the API server's client certificate must carry; the webhook's --client-name.",
  parse: parseNameList,
};

/** `interlock manifest --webhook` and its options (docs/admission.md). */
export const WEBHOOK_MANIFEST_FLAGS: readonly FlagDef[] = [
  WEBHOOK_SWITCH,
  CA_BUNDLE_FLAG,
  FAILURE_POLICY_FLAG,
  EXEMPT_NAMESPACES_FLAG,
  CANARY_NAMESPACE_FLAG,
  API_SERVER_CIDR_FLAG,
  METRICS_NAMESPACE_FLAG,
  WEBHOOK_CLIENT_CA_FLAG,
  WEBHOOK_CLIENT_NAME_FLAG,
] as readonly FlagDef[];
