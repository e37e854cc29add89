import type { FlagDef } from '../config/flag-def.js';
import { fail, ok, type Result } from '../reason/result.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const namespace = (value: string): Result<string, 'ConfigInvalid'> =>
  DNS_LABEL.test(value) ? ok(value) : fail('ConfigInvalid', 'expected a DNS-1123 label (lower case, digits, -)');

/** Where the webhook and the node agent run, for the commands that look at both parts at once. */
export const WEBHOOK_NAMESPACE_FLAG: FlagDef<string> = {
  name: 'webhook-namespace',
  kind: 'value',
  placeholder: 'NS',
  help: "The webhook's namespace (default interlock-webhook; check: the one its MutatingWebhookConfiguration calls, if any).",
  parse: namespace,
};

export const NODE_NAMESPACE_FLAG: FlagDef<string> = {
  name: 'node-namespace',
  kind: 'value',
  placeholder: 'NS',
  help: "The node agent's namespace (default interlock-system; check: its DaemonSet's, if any).",
  parse: namespace,
};
