import type { FlagDef } from '../../config/flag-def.js';
import { parseDnsLabel } from '../../config/flag-parsers.js';

/** Where the webhook and the node agent run, for the commands that look at both parts at once. */
export const WEBHOOK_NAMESPACE_FLAG: FlagDef<string> = {
  name: 'webhook-namespace',
  kind: 'value',
  placeholder: 'NS',
  help: "The webhook's namespace (default interlock-webhook; check: the one its MutatingWebhookConfiguration calls, if any).",
  parse: parseDnsLabel,
};

export const NODE_NAMESPACE_FLAG: FlagDef<string> = {
  name: 'node-namespace',
  kind: 'value',
  placeholder: 'NS',
  help: "The node agent's namespace (default interlock-system; check: judge only the agents there, not every namespace's).",
  parse: parseDnsLabel,
};
