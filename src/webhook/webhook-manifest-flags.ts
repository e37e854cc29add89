import { isIP } from 'node:net';
import type { FlagDef } from '../config/flag-def.js';
import { fail, ok, type Result } from '../reason/result.js';

const on = (): Result<boolean, 'ConfigInvalid'> => ok(true);
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** CIDR[,CIDR...], each an IPv4 or IPv6 network with its prefix length. */
function cidrs(value: string): Result<string[], 'ConfigInvalid'> {
  const list = value.split(',').map((item) => item.trim());
  const bad = list.find((item) => {
    const [address = '', length, extra] = item.split('/');
    const family = isIP(address);
    const bits = Number(length);
    return !family || extra !== undefined || !/^\d{1,3}$/.test(length ?? '') || bits > (family === 4 ? 32 : 128);
  });
  return bad === undefined
    ? ok(list)
    : fail('ConfigInvalid', `expected CIDR[,CIDR...] (10.0.0.0/24, fd00::/64), got ${JSON.stringify(bad)}`);
}

/** `interlock manifest --webhook` and its options (docs/admission.md). */
export const WEBHOOK_MANIFEST_FLAGS: readonly FlagDef[] = [
  {
    name: 'webhook',
    kind: 'switch',
    help: 'Print the admission webhook (Deployment, PDB, Service, ServiceAccount, MutatingWebhookConfiguration; docs/admission.md).',
    parse: on,
  },
  {
    name: 'ca-bundle',
    kind: 'value',
    placeholder: 'FILE',
    help: "With --webhook: the PEM CA of the webhook's serving certificate, written as caBundle (default: cert-manager issues the certificate and injects its CA).",
    parse: (value) => (value.trim() ? ok(value.trim()) : fail('ConfigInvalid', 'expected a file path')),
  },
  {
    name: 'failure-policy',
    kind: 'value',
    placeholder: 'Ignore|Fail',
    help: "With --webhook: what the API server does when the webhook does not answer (default {default}: the pod keeps the mesh's own validator).",
    parse: (value) =>
      value === 'Ignore' || value === 'Fail' ? ok(value) : fail('ConfigInvalid', 'expected Ignore or Fail'),
    default: 'Ignore',
  },
  {
    name: 'canary-namespace',
    kind: 'value',
    placeholder: 'NS',
    help: 'With --webhook: send only pods created in this namespace to the webhook (a canary).',
    parse: (value) =>
      NAMESPACE.test(value) ? ok(value) : fail('ConfigInvalid', 'expected a namespace name (DNS-1123 label)'),
  },
  {
    name: 'api-server-cidr',
    kind: 'value',
    placeholder: 'CIDR[,CIDR...]',
    help: "With --webhook: the API servers' addresses, the only sources the NetworkPolicy lets reach the webhook port (default: any source; the API server is not a pod a selector can name).",
    parse: cidrs,
  },
  {
    name: 'metrics-namespace',
    kind: 'value',
    placeholder: 'NS',
    help: 'With --webhook: the namespace whose pods (Prometheus) the NetworkPolicy lets scrape the metrics port (default {default}).',
    parse: (value) =>
      NAMESPACE.test(value) ? ok(value) : fail('ConfigInvalid', 'expected a namespace name (DNS-1123 label)'),
    default: 'monitoring',
  },
  {
    name: 'webhook-client-ca',
    kind: 'value',
    placeholder: 'FILE',
    help: "With --webhook: the PEM CA of the API server's client certificate; the webhook then refuses callers without one (docs/admission.md: the API server's admission kubeconfig).",
    parse: (value) => (value.trim() ? ok(value.trim()) : fail('ConfigInvalid', 'expected a file path')),
  },
];
