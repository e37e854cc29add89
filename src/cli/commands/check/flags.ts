import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { DefaultedFlag, FlagDef } from '../../../config/flag-def.js';
import { oneOf, parseDuration, parseImageReference, parseNonBlank, parseSwitch } from '../../../config/flag-parsers.js';
import { MESHES, type Mesh } from '../../../mesh/meshes.js';
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

export const PRE_FLAG: DefaultedFlag<boolean> = {
  name: 'pre',
  kind: 'switch',
  help: "Preflight, before an install: the mesh's CNI mode (--mesh), cert-manager or --ca-bundle, the Prometheus Operator's CRDs (--monitoring), the PodSecurity of each namespace the install puts pods in (the agent's, the webhook's, the meshed ones), and what --failure-policy Fail would select.",
  parse: parseSwitch,
  default: false,
};

// The flags below describe the install --pre checks for, as manifest takes them; argv only.
export const PRE_MESH_FLAG: FlagDef<Mesh> = {
  name: 'mesh',
  kind: 'value',
  placeholder: 'MESH',
  choices: MESHES,
  help: `With --pre: the mesh (${MESHES.join(', ')}) whose CNI mode and meshed namespaces are checked.`,
  parse: oneOf<Mesh>(MESHES),
};

export const PRE_CA_BUNDLE_FLAG: FlagDef<string> = {
  name: 'ca-bundle',
  kind: 'value',
  placeholder: 'FILE',
  help: "With --pre: the webhook's certificate is yours (manifest --ca-bundle), so cert-manager is not needed.",
  parse: parseNonBlank('expected a file path'),
};

export const PRE_MONITORING_FLAG: DefaultedFlag<boolean> = {
  name: 'monitoring',
  kind: 'switch',
  help: 'With --pre: the install prints PodMonitors and a PrometheusRule (manifest --monitoring).',
  parse: parseSwitch,
  default: false,
};

export const PRE_FAILURE_POLICY_FLAG: FlagDef<'Ignore' | 'Fail'> = {
  name: 'failure-policy',
  kind: 'value',
  placeholder: 'Ignore|Fail',
  help: "With --pre: the webhook's failurePolicy; Fail lists the namespaces of the mesh, its CNI and cert-manager it would select.",
  parse: oneOf(['Ignore', 'Fail'], { say: 'or', exact: true }),
};

export const PRE_WEBHOOK_FLAG: FlagDef<boolean> = {
  name: 'webhook',
  kind: 'switch',
  help: 'With --pre: the install has the webhook (manifest --webhook); with --node-agent too, or neither, both parts.',
  parse: parseSwitch,
};

export const PRE_NODE_AGENT_FLAG: FlagDef<boolean> = {
  name: 'node-agent',
  kind: 'switch',
  help: 'With --pre: the install has the node agent (manifest --node-agent); with --webhook too, or neither, both parts.',
  parse: parseSwitch,
};

export const PRE_RULES_CHECK_FLAG: FlagDef<boolean> = {
  name: 'rules-check',
  kind: 'switch',
  help: "With --pre: the meshed pods' validator runs the rules check (inject --rules-check), which only PodSecurity privileged admits.",
  parse: parseSwitch,
};

export const PRE_IMAGE_FLAG: FlagDef<string> = {
  name: 'image',
  kind: 'value',
  placeholder: 'IMAGE',
  help: "With --pre: Interlock's image, as the fixes print it. With --data-plane: the install's image when no installed part names it (inject alone).",
  parse: parseImageReference,
};

export const WAIT_FLAG: FlagDef<number> = {
  name: 'wait',
  kind: 'value',
  placeholder: 'DURATION',
  help: 'Re-run the checks every 2s until they pass or DURATION (`5m`) ends, then print the last run; progress on stderr.',
  parse: parseDuration(1000, 3_600_000, '30s, 5m, 1h'),
};

export const CHECK_OUTPUT_FLAG = textOrJsonFlag();

export const CHECK_FLAGS: readonly FlagDef[] = [
  KUBECONFIG_FLAG,
  CONTEXT_FLAG,
  WEBHOOK_NAMESPACE_FLAG,
  NODE_NAMESPACE_FLAG,
  DATA_PLANE_FLAG,
  PRE_FLAG,
  PRE_MESH_FLAG,
  PRE_CA_BUNDLE_FLAG,
  PRE_MONITORING_FLAG,
  PRE_FAILURE_POLICY_FLAG,
  PRE_IMAGE_FLAG,
  PRE_WEBHOOK_FLAG,
  PRE_NODE_AGENT_FLAG,
  PRE_RULES_CHECK_FLAG,
  WAIT_FLAG,
  CHECK_OUTPUT_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
];
