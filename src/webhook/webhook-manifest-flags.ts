import type { FlagDef } from '../config/flag-def.js';
import { fail, ok, type Result } from '../reason/result.js';

const commands = ['manifest'] as const;
const on = (): Result<boolean, 'ConfigInvalid'> => ok(true);

/** `interlock manifest --webhook` and its options (docs/admission.md). */
export const WEBHOOK_MANIFEST_FLAGS: readonly FlagDef[] = [
  {
    name: 'webhook',
    kind: 'switch',
    help: 'Print the admission webhook (Deployment, PDB, Service, ServiceAccount, MutatingWebhookConfiguration; docs/admission.md).',
    commands,
    parse: on,
  },
  {
    name: 'ca-bundle',
    kind: 'value',
    placeholder: 'FILE',
    help: "With --webhook: the PEM CA of the webhook's serving certificate, written as caBundle (default: cert-manager issues the certificate and injects its CA).",
    commands,
    parse: (value) => (value.trim() ? ok(value.trim()) : fail('ConfigInvalid', 'expected a file path')),
  },
  {
    name: 'failure-policy',
    kind: 'value',
    placeholder: 'Ignore|Fail',
    help: "With --webhook: what the API server does when the webhook does not answer (default Ignore: the pod keeps the mesh's own validator).",
    commands,
    parse: (value) =>
      value === 'Ignore' || value === 'Fail' ? ok(value) : fail('ConfigInvalid', 'expected Ignore or Fail'),
    default: 'Ignore',
  },
  {
    name: 'canary-namespace',
    kind: 'value',
    placeholder: 'NS',
    help: 'With --webhook: send only pods created in this namespace to the webhook (a canary).',
    commands,
    parse: (value) =>
      /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)
        ? ok(value)
        : fail('ConfigInvalid', 'expected a namespace name (DNS-1123 label)'),
  },
];
