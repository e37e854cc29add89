import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { DefaultedFlag, FlagDef } from '../../../config/flag-def.js';
import { parseNonBlank, parseSwitch } from '../../../config/flag-parsers.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from '../../flags/part-namespace-flags.js';
import { textOrJsonFlag } from '../../flags/text-or-json-flag.js';

// Argv only: `check` reads KUBECONFIG as kubectl does, and no INTERLOCK_* variable.
export const KUBECONFIG_FLAG: FlagDef<string> = {
  name: 'kubeconfig',
  kind: 'value',
  placeholder: 'FILE',
  help: 'The kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config, as kubectl reads them).',
  parse: parseNonBlank('must not be empty'),
};

export const CONTEXT_FLAG: FlagDef<string> = {
  name: 'context',
  kind: 'value',
  placeholder: 'NAME',
  help: 'The kubeconfig context to use (default: its current-context).',
  parse: parseNonBlank('must not be empty'),
};

export const DATA_PLANE_FLAG: DefaultedFlag<boolean> = {
  name: 'data-plane',
  kind: 'switch',
  help: "Also check the meshed pods (as `linkerd check --proxy`): those without Interlock's validator, those blocked now (reason, node), those with a CaptureLost Event, and workloads running another validator image than the install's.",
  parse: parseSwitch,
  default: false,
};

export const CHECK_OUTPUT_FLAG = textOrJsonFlag();

export const CHECK_FLAGS: readonly FlagDef[] = [
  KUBECONFIG_FLAG,
  CONTEXT_FLAG,
  WEBHOOK_NAMESPACE_FLAG,
  NODE_NAMESPACE_FLAG,
  DATA_PLANE_FLAG,
  CHECK_OUTPUT_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
];
