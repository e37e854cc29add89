import { EXIT } from '../config/exit-codes.js';
import { oneOf, parseDnsLabel } from '../config/flag-parsers.js';
import type { FlagDef } from '../config/flag-def.js';
import { hasOwnPorts, meshNamesText, type Mesh } from '../mesh/meshes.js';
import { containerDocument, jsonNotes, renderJson, renderYaml, type ManifestDocument } from '../inject/manifest.js';
import { eventRbacDocuments } from '../inject/event-rbac.js';
import { IMAGE_FLAG } from './image-flag.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import { INBOUND_PORT_FLAG, MESH_FLAG, OUTBOUND_PORT_FLAG } from '../config/interception-flags.js';
import { REPORT_EVENT_FLAG } from '../config/validate-config.js';
import { HELP_FLAG, VERSION_FLAG } from '../config/command-flags.js';
import type { NodeAction } from '../node-agent/decide.js';
import type { NodeAgentManifestOptions } from '../node-agent/manifest.js';
import { socketPathOf } from '../node-agent/cri/socket-path.js';
import type { TaintMatch } from '../config/flag-parsers.js';
import { NODE_COMMAND_FLAGS } from './node-command-flags.js';
import { fail, ok, type Result } from '../reason/result.js';
import { WEBHOOK_MANIFEST_FLAGS } from '../webhook/webhook-manifest-flags.js';
import { commandError } from './command-error.js';
import { printedRefusal } from './printed-check.js';
import { defaultImageWarning } from './default-image.js';
import { namespaceOwnership } from './namespace-ownership.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from './part-namespace-flags.js';
import type { CommandOutcome } from './command-outcome.js';

/** ServiceAccount names are DNS-1123 subdomains: dots allowed. */
const accountNames = (value: string): Result<string[], 'ConfigInvalid'> => {
  const names = value.split(',').map((name) => name.trim());
  return names.every((name) => /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
    ? ok(names)
    : fail('ConfigInvalid', 'expected ServiceAccount names (DNS-1123 subdomains), comma-separated');
};
const on = (): Result<boolean, 'ConfigInvalid'> => ok(true);

/** Shared with inject. */
export const RULES_CHECK_FLAG: FlagDef<boolean> = {
  name: 'rules-check',
  kind: 'switch',
  help: 'Run as uid 0 with NET_ADMIN and NET_RAW so the NAT rules are read and checked (--rules required). PodSecurity baseline and restricted reject such a pod: its namespace needs pod-security.kubernetes.io/enforce=privileged, which lifts every PodSecurity check there (docs/operator.md).',
  parse: on,
};

/** Shared with inject. */
export const NATIVE_SIDECAR_FLAG: FlagDef<boolean> = {
  name: 'native-sidecar',
  kind: 'switch',
  help: 'The proxy is a native sidecar: state (and in inject, check) that the validator runs before it.',
  parse: on,
};

export const MANIFEST_FLAGS: readonly FlagDef[] = [
  MESH_FLAG,
  IMAGE_FLAG,
  INBOUND_PORT_FLAG,
  OUTBOUND_PORT_FLAG,
  {
    name: 'output',
    short: 'o',
    kind: 'value',
    placeholder: 'yaml|json',
    help: 'Output format (default {default}; json has no comments).',
    parse: oneOf(['yaml', 'json'] as const, { say: 'bare', exact: true }),
    default: 'yaml',
  },
  RULES_CHECK_FLAG,
  REPORT_EVENT_FLAG,
  NATIVE_SIDECAR_FLAG,
  {
    name: 'namespace',
    kind: 'value',
    placeholder: 'NS',
    help: "--rbac: namespace of the pods and their Event RBAC (default default); --node-agent: the agent's namespace (default interlock-system); --webhook: the webhook's (default interlock-webhook). Each output prints its Namespace and kubectl delete -f removes it with all inside: give the two parts different namespaces.",
    parse: parseDnsLabel,
  },
  {
    name: 'service-account',
    kind: 'value',
    placeholder: 'NAME[,NAME]',
    help: "--rbac: the pods' existing ServiceAccounts to bind (never created; default: every ServiceAccount of the namespace, by its group).",
    parse: accountNames,
  },
  {
    name: 'rbac',
    kind: 'switch',
    help: 'Print the Role and RoleBinding that --report-event needs (objects for kubectl apply) instead of the init container.',
    parse: on,
  },
  {
    name: 'node-agent',
    kind: 'switch',
    help: 'Print the node agent (Namespace, RBAC, DaemonSet) instead of the init container; takes every `node` flag.',
    parse: on,
  },
  ...WEBHOOK_MANIFEST_FLAGS,
  {
    name: 'monitoring',
    kind: 'switch',
    help: 'Print a PodMonitor for each part and a PrometheusRule with its alerts (Prometheus Operator) instead of the init container.',
    parse: on,
  },
  WEBHOOK_NAMESPACE_FLAG,
  NODE_NAMESPACE_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
];

export type FlagValues = ReadonlyMap<string, unknown>;

/**
 * The one shared command-line reader (strict, repeated flags and switch values refused), with the
 * values keyed by flag name. A switch the operator did not give is absent, so `values.has` asks it.
 */
export function parseCommandFlags(
  command: 'manifest' | 'inject',
  argv: readonly string[],
  flags: readonly FlagDef[],
  env: Readonly<Record<string, string | undefined>>,
): Result<{ values: FlagValues; imageGiven: boolean }, 'ConfigInvalid'> {
  const parsed = parseCommandLine(command, argv, env, flags);
  if (!parsed.ok) return parsed;
  // The mesh's default (generic) is validate's; here only a mesh the operator named counts.
  const values = new Map(parsed.value.values);
  if (!parsed.value.sources.has('mesh')) values.delete('mesh');
  if (values.get('report-event') === false) values.delete('report-event');
  return ok({ values, imageGiven: parsed.value.sources.has('image') });
}

/** The node agent's documents: Namespace, RBAC and DaemonSet, as plain data. */
export type NodeAgentManifest = (options: NodeAgentManifestOptions) => Promise<readonly object[]>;

/** manifest --webhook without --api-server-cidr: its NetworkPolicy opens the admission port to all. */
async function openPortWarning(): Promise<string> {
  return `interlock manifest: warning: ${(await import('../webhook/webhook-manifest.js')).OPEN_ADMISSION_PORT_WARNING}\n`;
}

const nodeAgentDocuments: NodeAgentManifest = async (options) =>
  (await import('../node-agent/manifest.js')).nodeAgentManifest(options);

type Mode = 'container' | 'rbac' | 'node-agent' | 'webhook' | 'monitoring';

/** The flags each output mode takes; any other flag given is an error naming the mode. */
export const MODE_FLAGS: Readonly<Record<Mode, readonly string[]>> = {
  container: [
    'mesh',
    'image',
    'inbound-port',
    'outbound-port',
    'output',
    'rules-check',
    'report-event',
    'native-sidecar',
  ],
  rbac: ['rbac', 'namespace', 'service-account', 'output'],
  'node-agent': ['node-agent', 'mesh', 'image', 'namespace', 'output'],
  webhook: [
    'webhook',
    'mesh',
    'image',
    'namespace',
    'output',
    'ca-bundle',
    'failure-policy',
    'canary-namespace',
    'api-server-cidr',
    'metrics-namespace',
    'webhook-client-ca',
  ],
  monitoring: ['monitoring', 'webhook-namespace', 'node-namespace', 'output'],
};

/** Node flags `manifest --node-agent` passes to the agent (mesh and help are manifest's own). */
export const AGENT_FLAGS = NODE_COMMAND_FLAGS.filter((flag) => !['mesh', 'help', 'version'].includes(flag.name));

export async function runManifest(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  nodeAgent: NodeAgentManifest = nodeAgentDocuments,
): Promise<CommandOutcome> {
  const mode = modeOf(argv);
  const { own, agent } = mode === 'node-agent' ? splitAgentArgs(argv) : { own: argv, agent: [] };
  const parsed = parseCommandFlags('manifest', own, MANIFEST_FLAGS, env);
  if (!parsed.ok) return usageError(parsed.error.message);
  const { values } = parsed.value;
  const misplaced = givenFlags(own).find((name) => !MODE_FLAGS[mode].includes(name));
  if (misplaced) return usageError(`--${misplaced} does not apply to ${modeName(mode)}`);
  const documents = await modeDocuments(mode, values, agent, nodeAgent);
  if (typeof documents === 'string') return usageError(documents);
  // What is printed must start: the command each container runs checks it here, at print time.
  const refused = printedRefusal(documents.map((document) => document.value));
  if (refused) return usageError(refused);
  const json = values.get('output') === 'json';
  const stdout = json ? renderJson(documents) : renderYaml(documents);
  const usesImage = mode !== 'rbac' && !parsed.value.imageGiven;
  const openPort = mode === 'webhook' && !values.has('api-server-cidr') ? await openPortWarning() : '';
  const stderr = `${json ? jsonNotes('manifest', documents) : ''}${usesImage ? defaultImageWarning('manifest') : ''}${openPort}`;
  return { exitCode: 0, stdout, stderr };
}

/** The output mode, named by its switch; several switches at once leave all but one misplaced, hence refused. */
function modeOf(argv: readonly string[]): Mode {
  const given = (name: string) => argv.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (given('node-agent')) return 'node-agent';
  if (given('webhook')) return 'webhook';
  if (given('monitoring')) return 'monitoring';
  return given('rbac') ? 'rbac' : 'container';
}

function modeName(mode: Mode): string {
  return {
    container: 'the init container (no --rbac, --node-agent, --webhook or --monitoring)',
    rbac: 'manifest --rbac',
    'node-agent': 'manifest --node-agent',
    webhook: 'manifest --webhook',
    monitoring: 'manifest --monitoring',
  }[mode];
}

async function modeDocuments(
  mode: Mode,
  values: FlagValues,
  agent: readonly string[],
  nodeAgent: NodeAgentManifest,
): Promise<ManifestDocument[] | string> {
  if (mode === 'rbac') {
    const namespace = (values.get('namespace') as string | undefined) ?? 'default';
    const serviceAccounts = (values.get('service-account') as string[] | undefined) ?? [];
    return eventRbacDocuments({ namespace, serviceAccounts }).map((value) => ({ value }));
  }
  if (mode === 'node-agent') return agentDocuments(values, agent, nodeAgent);
  if (mode === 'monitoring')
    return (await import('./manifest-monitoring.js')).monitoringDocuments({
      ...(values.has('webhook-namespace') ? { webhookNamespace: values.get('webhook-namespace') as string } : {}),
      ...(values.has('node-namespace') ? { nodeNamespace: values.get('node-namespace') as string } : {}),
    });
  if (mode === 'webhook') {
    const webhook = (await import('./manifest-webhook.js')).webhookDocuments(values);
    return webhook.ok ? webhook.value : webhook.error.message;
  }
  const mesh = values.get('mesh') as Mesh | undefined;
  if (!mesh) return `--mesh is required: ${meshNamesText()}`;
  const ports = portArgs(values, mesh);
  if (!ports.ok) return ports.error.message;
  return [
    containerDocument({
      mesh,
      image: values.get('image') as string,
      extraArgs: ports.value,
      rulesCheck: values.has('rules-check'),
      reportEvent: values.has('report-event'),
      nativeSidecar: values.has('native-sidecar'),
    }),
  ];
}

/** The agent's documents; its flags are read by `node`'s own table (no environment: the manifest is for the cluster). */
async function agentDocuments(
  values: FlagValues,
  agent: readonly string[],
  nodeAgent: NodeAgentManifest,
): Promise<ManifestDocument[] | string> {
  const mesh = (values.get('mesh') as Mesh | undefined) ?? 'generic';
  const pinned = agent.find((arg) => /^--node-name(=|$)/.test(arg));
  if (pinned)
    return '--node-name does not apply to manifest --node-agent: one DaemonSet runs on every node, and each agent takes its own node from the downward API (NODE_NAME)';
  const node = parseCommandLine('node', [`--mesh=${mesh}`, ...agent], {}, NODE_COMMAND_FLAGS);
  if (!node.ok) return node.error.message;
  const flags = node.value.values;
  const namespace = values.get('namespace') as string | undefined;
  const listen = flags.get('listen') as { port: number } | undefined;
  const image = values.get('image') as string;
  const documents = await nodeAgent({
    image,
    mesh,
    nodeArgs: [...agent, ...trustedImageArgs(agent, image)],
    action: flags.get('action') as NodeAction,
    taint: flags.get('taint') === true,
    ...(namespace ? { namespace } : {}),
    ...(agent.some((arg) => arg.startsWith('--listen')) && listen ? { listenPort: listen.port } : {}),
    ...(flags.get('cni-audit') === true
      ? { cni: { confDir: flags.get('cni-conf-dir') as string, binDirs: flags.get('cni-bin-dir') as string[] } }
      : {}),
    ...recheckOption(flags),
    ...gateOption(flags),
  });
  return documents.map((value, index) => ({
    value: value as Record<string, unknown>,
    ...(index === 0 ? { comment: namespaceOwnership(namespace ?? 'interlock-system') } : {}),
  }));
}

/** With `--report-condition` or `--startup-taint`, the node gate's rights; without, nothing changes. */
function gateOption(flags: FlagValues): Pick<NodeAgentManifestOptions, 'gate'> {
  const condition = flags.get('report-condition') === true;
  const startupTaint = (flags.get('startup-taint') as TaintMatch | undefined)?.key;
  return condition || startupTaint ? { gate: { condition, startupTaint } } : {};
}

/** With `--recheck-interval`, the agent is the privileged variant and mounts the runtime's socket. */
function recheckOption(flags: FlagValues): Pick<NodeAgentManifestOptions, 'recheck'> {
  if (flags.get('recheck-interval') === undefined) return {};
  const socket = socketPathOf(flags.get('cri-endpoint') as string);
  return socket.ok ? { recheck: { socketPath: socket.value } } : {};
}

/**
 * The agent counts a validator's failures only from images it trusts: by default the one the
 * printed validators use. Printed when the agent has the flag and the operator did not set it.
 */
function trustedImageArgs(agent: readonly string[], image: string): string[] {
  if (!NODE_COMMAND_FLAGS.some((flag) => flag.name === 'trusted-image')) return [];
  if (agent.some((arg) => arg.startsWith('--trusted-image'))) return [];
  const repository = image.split('@')[0]?.replace(/:[^/:]*$/, '') ?? image;
  return [`--trusted-image=${repository}`];
}

/** The words of `argv` that are node flags (with their values), apart from manifest's own. */
function splitAgentArgs(argv: readonly string[]): { own: string[]; agent: string[] } {
  const own: string[] = [];
  const agent: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index] ?? '';
    const name = /^--([^=]+)/.exec(word)?.[1];
    const flag = AGENT_FLAGS.find((candidate) => candidate.name === name);
    if (!flag || MANIFEST_FLAGS.some((candidate) => candidate.name === name)) {
      own.push(word);
      continue;
    }
    agent.push(word);
    if (flag.kind === 'value' && !word.includes('=') && index + 1 < argv.length) agent.push(argv[++index] ?? '');
  }
  return { own, agent };
}

/** The flag names written in argv (not from the environment), help aside. */
function givenFlags(argv: readonly string[]): string[] {
  return argv.flatMap((word) => {
    const name = /^--([^=]+)/.exec(word)?.[1];
    return name && name !== 'help' && MANIFEST_FLAGS.some((flag) => flag.name === name) ? [name] : [];
  });
}
/**
 * validate's port flags from --inbound-port/--outbound-port; the generic preset has no ports, so
 * without both a generic validator could only ever fail with ConfigInvalid.
 */
function portArgs(values: FlagValues, mesh: Mesh | undefined): Result<string[], 'ConfigInvalid'> {
  const args = ['inbound-port', 'outbound-port'].flatMap((name) =>
    values.has(name) ? [`--${name}`, String(values.get(name))] : [],
  );
  if (mesh !== undefined && !hasOwnPorts(mesh) && args.length < 4)
    return fail(
      'ConfigInvalid',
      `--mesh ${mesh} needs --inbound-port and --outbound-port (the proxy's redirect ports)`,
    );
  return ok(args);
}

function usageError(message: string): CommandOutcome {
  return commandError('manifest', EXIT.invalidConfig, { reason: 'ConfigInvalid', message });
}
