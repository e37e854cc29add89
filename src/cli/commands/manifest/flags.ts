import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { DefaultedFlag, FlagDef } from '../../../config/flag-def.js';
import {
  oneOf,
  parseDnsLabel,
  parseSecretNames,
  parseServiceAccounts,
  parseSwitch,
} from '../../../config/flag-parsers.js';
import { INBOUND_PORT_FLAG, MESH_FLAG, OUTBOUND_PORT_FLAG } from '../../../config/interception-flags.js';
import { REPORT_EVENT_FLAG } from '../../../config/validate-config.js';
import { WEBHOOK_MANIFEST_FLAGS } from './webhook-flags.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { PLATFORM_FLAG } from '../../flags/platform-flag.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from '../../flags/part-namespace-flags.js';
import { NODE_COMMAND_FLAGS } from '../node/flags.js';

/** Shared with inject. */
export const RULES_CHECK_FLAG: FlagDef<boolean> = {
  name: 'rules-check',
  kind: 'switch',
  help: 'Run as uid 0 with NET_ADMIN and NET_RAW so the NAT rules are read and checked (--rules required). PodSecurity baseline and restricted reject such a pod: its namespace needs pod-security.kubernetes.io/enforce=privileged, which lifts every PodSecurity check there (docs/operator.md).',
  parse: parseSwitch,
};

/** Shared with inject. */
export const NATIVE_SIDECAR_FLAG: FlagDef<boolean> = {
  name: 'native-sidecar',
  kind: 'switch',
  help: 'The proxy is a native sidecar: state (and in inject, check) that the validator runs before it.',
  parse: parseSwitch,
};

export const MANIFEST_OUTPUT_FLAG: DefaultedFlag<'yaml' | 'json'> = {
  name: 'output',
  short: 'o',
  kind: 'value',
  placeholder: 'yaml|json',
  help: 'Output format (default {default}; json has no comments).',
  parse: oneOf(['yaml', 'json'] as const, { say: 'bare', exact: true }),
  default: 'yaml',
};

export const NAMESPACE_FLAG: FlagDef<string> = {
  name: 'namespace',
  kind: 'value',
  placeholder: 'NS',
  help: "--rbac: namespace of the pods and their Event RBAC (default default); --node-agent: the agent's namespace (default interlock-system); --webhook: the webhook's (default interlock-webhook). Each output prints its Namespace and kubectl delete -f removes it with all inside: give the two parts different namespaces.",
  parse: parseDnsLabel,
};

export const SERVICE_ACCOUNT_FLAG: FlagDef<string[]> = {
  name: 'service-account',
  kind: 'value',
  placeholder: 'NAME[,NAME]',
  help: "--rbac: the pods' existing ServiceAccounts to bind (never created; default: every ServiceAccount of the namespace, by its group).",
  parse: parseServiceAccounts,
};

export const IMAGE_PULL_SECRET_FLAG: FlagDef<string[]> = {
  name: 'image-pull-secret',
  kind: 'value',
  placeholder: 'NAME[,NAME]',
  help: "--node-agent, --webhook: the Secrets (in the part's namespace, yours to create) the pods pull Interlock's image with.",
  parse: parseSecretNames,
};

const RBAC_FLAG: FlagDef<boolean> = {
  name: 'rbac',
  kind: 'switch',
  help: 'Print the Role and RoleBinding that --report-event needs (objects for kubectl apply) instead of the init container.',
  parse: parseSwitch,
};

const NODE_AGENT_FLAG: FlagDef<boolean> = {
  name: 'node-agent',
  kind: 'switch',
  help: 'Print the node agent (Namespace, RBAC, DaemonSet) for the mesh --mesh names (required) instead of the init container; takes every `node` flag.',
  parse: parseSwitch,
};

const MONITORING_FLAG: FlagDef<boolean> = {
  name: 'monitoring',
  kind: 'switch',
  help: 'Print a PodMonitor for each part and a PrometheusRule with its alerts (Prometheus Operator) instead of the init container.',
  parse: parseSwitch,
};

export const MANIFEST_FLAGS: readonly FlagDef[] = [
  MESH_FLAG,
  IMAGE_FLAG,
  PLATFORM_FLAG,
  INBOUND_PORT_FLAG,
  OUTBOUND_PORT_FLAG,
  MANIFEST_OUTPUT_FLAG,
  RULES_CHECK_FLAG,
  REPORT_EVENT_FLAG,
  NATIVE_SIDECAR_FLAG,
  NAMESPACE_FLAG,
  SERVICE_ACCOUNT_FLAG,
  IMAGE_PULL_SECRET_FLAG,
  RBAC_FLAG,
  NODE_AGENT_FLAG,
  ...WEBHOOK_MANIFEST_FLAGS,
  MONITORING_FLAG,
  WEBHOOK_NAMESPACE_FLAG,
  NODE_NAMESPACE_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
] as readonly FlagDef[];

/** Node flags `manifest --node-agent` passes to the agent (mesh and help are manifest's own). */
export const AGENT_FLAGS = NODE_COMMAND_FLAGS.filter((flag) => !['mesh', 'help', 'version'].includes(flag.name));
