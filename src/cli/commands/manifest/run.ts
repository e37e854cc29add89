import { EXIT } from '../../../config/exit-codes.js';
import { hasOwnPorts, meshNamesText, type Mesh } from '../../../mesh/meshes.js';
import {
  containerDocument,
  jsonNotes,
  renderJson,
  renderYaml,
  type ManifestDocument,
} from '../../../inject/manifest.js';
import { eventRbacDocuments } from '../../../inject/event-rbac.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { PLATFORM_FLAG } from '../../flags/platform-flag.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import {
  environmentSources,
  flagSource,
  flagValue,
  givenValue,
  type ParsedFlags,
} from '../../../config/parsed-flags.js';
import { MESH_FLAG } from '../../../config/interception-flags.js';
import { validatorPortArgs } from '../../flags/validator-port-args.js';
import { REPORT_EVENT_FLAG } from '../../../config/validate-config.js';
import type { NodeAgentManifestOptions } from '../../../node-agent/manifest.js';
import { NODE_COMMAND_FLAGS } from '../node/flags.js';
import { fail, ok, type Result } from '../../../reason/result.js';
import { commandError } from '../../command-error.js';
import { printedRefusal } from './printed-check.js';
import { defaultImageWarning } from '../../flags/default-image.js';
import { foreignNamespace, namespaceOwnership } from './namespace-ownership.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from '../../flags/part-namespace-flags.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { agentManifestOptions } from '../node/config.js';
import { API_SERVER_CIDR_FLAG } from './webhook-flags.js';
import { installRecord } from './install-record.js';
import type { Component } from '../../../kube/interlock-labels.js';
import {
  AGENT_FLAGS,
  IMAGE_PULL_SECRET_FLAG,
  MANIFEST_FLAGS,
  MANIFEST_OUTPUT_FLAG,
  NAMESPACE_FLAG,
  NATIVE_SIDECAR_FLAG,
  RULES_CHECK_FLAG,
  SERVICE_ACCOUNT_FLAG,
} from './flags.js';

/** The node agent's documents: Namespace, RBAC and DaemonSet, as plain data. */
export type NodeAgentManifest = (options: NodeAgentManifestOptions) => Promise<readonly object[]>;

/** manifest --webhook without --api-server-cidr: its NetworkPolicy opens the admission port to all. */
async function openPortWarning(): Promise<string> {
  return `interlock manifest: warning: ${(await import('../../../webhook/webhook-manifest.js')).OPEN_ADMISSION_PORT_WARNING}\n`;
}

const nodeAgentDocuments: NodeAgentManifest = async (options) =>
  (await import('../../../node-agent/manifest.js')).nodeAgentManifest(options);

type Mode = 'container' | 'rbac' | 'node-agent' | 'webhook' | 'monitoring';

/** The flags each output mode takes; any other flag given is an error naming the mode. */
export const MODE_FLAGS: Readonly<Record<Mode, readonly string[]>> = {
  container: [
    'mesh',
    'image',
    'platform',
    'inbound-port',
    'outbound-port',
    'output',
    'rules-check',
    'report-event',
    'native-sidecar',
  ],
  rbac: ['rbac', 'namespace', 'service-account', 'output'],
  'node-agent': ['node-agent', 'mesh', 'image', 'platform', 'namespace', 'output', 'image-pull-secret'],
  webhook: [
    'webhook',
    'mesh',
    'image',
    'platform',
    'namespace',
    'output',
    'image-pull-secret',
    'ca-bundle',
    'failure-policy',
    'canary-namespace',
    'api-server-cidr',
    'metrics-namespace',
    'webhook-client-ca',
    'webhook-client-name',
  ],
  monitoring: ['monitoring', 'webhook-namespace', 'node-namespace', 'output'],
};

export async function runManifest(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  nodeAgent: NodeAgentManifest = nodeAgentDocuments,
): Promise<CommandOutcome> {
  const mode = modeOf(argv);
  const { own, agent } = mode === 'node-agent' ? splitAgentArgs(argv) : { own: argv, agent: [] };
  const parsed = parseCommandLine('manifest', own, env, MANIFEST_FLAGS);
  if (!parsed.ok) return usageError(parsed.error.message);
  const values = parsed.value;
  const misplaced = givenFlags(own).find((name) => !MODE_FLAGS[mode].includes(name));
  if (misplaced) return usageError(`--${misplaced} does not apply to ${modeName(mode)}`);
  const namespace = flagValue(values, NAMESPACE_FLAG);
  const foreign = mode === 'node-agent' || mode === 'webhook' ? namespace && foreignNamespace(namespace) : undefined;
  if (foreign) return usageError(foreign);
  const documents = await modeDocuments(mode, values, agent, nodeAgent);
  if (typeof documents === 'string') return usageError(documents);
  // What is printed must start: the command each container runs checks it here, at print time.
  const refused = printedRefusal(documents.map((document) => document.value));
  if (refused) return usageError(refused);
  documents.push(...recorded(mode, documents, argv, values, env));
  const json = flagValue(values, MANIFEST_OUTPUT_FLAG) === 'json';
  const stdout = json ? renderJson(documents) : renderYaml(documents);
  const usesImage = mode !== 'rbac' && flagSource(values, IMAGE_FLAG) === undefined;
  const openPort =
    mode === 'webhook' && flagValue(values, API_SERVER_CIDR_FLAG) === undefined ? await openPortWarning() : '';
  const stderr = `${json ? jsonNotes('manifest', documents) : ''}${usesImage ? defaultImageWarning('manifest') : ''}${openPort}`;
  return { exitCode: 0, stdout, stderr };
}

/** The part each mode installs; the init container is pasted into the operator's own objects, not installed. */
const COMPONENT: Readonly<Record<Mode, Component | undefined>> = {
  container: undefined,
  rbac: 'validator-events',
  'node-agent': 'node-agent',
  webhook: 'webhook',
  monitoring: 'monitoring',
};

/** The install record of what is printed (install-record.ts), when the mode installs something. */
function recorded(
  mode: Mode,
  documents: readonly ManifestDocument[],
  argv: readonly string[],
  values: ParsedFlags,
  env: Readonly<Record<string, string | undefined>>,
): ManifestDocument[] {
  const component = COMPONENT[mode];
  if (component === undefined) return [];
  const environment = environmentSources(values).map((variable) => `${variable}=${env[variable] ?? ''}`);
  const record = installRecord({ component, argv: withoutOutputFormat(argv), environment, documents });
  return record ? [record] : [];
}

/** argv without --output/-o: YAML or JSON, the same objects are installed. */
function withoutOutputFormat(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index] ?? '';
    if (word === '--output' || word === '-o') index++;
    else if (!/^(--output=|-o=?)./.test(word)) out.push(word);
  }
  return out;
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
  values: ParsedFlags,
  agent: readonly string[],
  nodeAgent: NodeAgentManifest,
): Promise<ManifestDocument[] | string> {
  if (mode === 'rbac') {
    const namespace = flagValue(values, NAMESPACE_FLAG) ?? 'default';
    const serviceAccounts = flagValue(values, SERVICE_ACCOUNT_FLAG) ?? [];
    return eventRbacDocuments({ namespace, serviceAccounts }).map((value) => ({ value }));
  }
  if (mode === 'node-agent') return agentDocuments(values, agent, nodeAgent);
  if (mode === 'monitoring') {
    const webhookNamespace = givenValue(values, WEBHOOK_NAMESPACE_FLAG);
    const nodeNamespace = givenValue(values, NODE_NAMESPACE_FLAG);
    return (await import('./monitoring.js')).monitoringDocuments({
      ...(webhookNamespace === undefined ? {} : { webhookNamespace }),
      ...(nodeNamespace === undefined ? {} : { nodeNamespace }),
    });
  }
  if (mode === 'webhook') {
    const webhook = (await import('./webhook.js')).webhookDocuments(values);
    return webhook.ok ? webhook.value : webhook.error.message;
  }
  const mesh = givenValue(values, MESH_FLAG);
  if (!mesh) return `--mesh is required: ${meshNamesText()}`;
  const ports = portArgs(values, mesh);
  if (!ports.ok) return ports.error.message;
  return [
    containerDocument({
      mesh,
      image: flagValue(values, IMAGE_FLAG),
      platform: flagValue(values, PLATFORM_FLAG),
      extraArgs: ports.value,
      rulesCheck: flagValue(values, RULES_CHECK_FLAG) === true,
      reportEvent: flagValue(values, REPORT_EVENT_FLAG),
      nativeSidecar: flagValue(values, NATIVE_SIDECAR_FLAG) === true,
    }),
  ];
}

/** The agent's documents; its flags are read by `node`'s own table (no environment: the manifest is for the cluster). */
async function agentDocuments(
  values: ParsedFlags,
  agent: readonly string[],
  nodeAgent: NodeAgentManifest,
): Promise<ManifestDocument[] | string> {
  const mesh = givenValue(values, MESH_FLAG);
  if (mesh === undefined)
    return `--node-agent needs --mesh (${meshNamesText()}): the agent judges only that mesh's validators, and a generic agent ignores every mesh's pods while check calls it healthy`;
  const pinned = agent.find((arg) => /^--node-name(=|$)/.test(arg));
  if (pinned)
    return '--node-name does not apply to manifest --node-agent: one DaemonSet runs on every node, and each agent takes its own node from the downward API (NODE_NAME)';
  const node = parseCommandLine('node', [`--mesh=${mesh}`, ...agent], {}, NODE_COMMAND_FLAGS);
  if (!node.ok) return node.error.message;
  const namespace = flagValue(values, NAMESPACE_FLAG);
  const image = flagValue(values, IMAGE_FLAG);
  const pullSecrets = flagValue(values, IMAGE_PULL_SECRET_FLAG);
  const documents = await nodeAgent({
    image,
    mesh,
    ...(pullSecrets ? { imagePullSecrets: pullSecrets } : {}),
    platform: flagValue(values, PLATFORM_FLAG),
    nodeArgs: agent,
    ...(namespace ? { namespace } : {}),
    ...agentManifestOptions(
      node.value,
      agent.some((arg) => arg.startsWith('--listen')),
    ),
  });
  return documents.map((value, index) => ({
    value: value as Record<string, unknown>,
    ...(index === 0 ? { comment: namespaceOwnership(namespace ?? 'interlock-system') } : {}),
  }));
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
function portArgs(values: ParsedFlags, mesh: Mesh): Result<string[], 'ConfigInvalid'> {
  const args = validatorPortArgs(values);
  if (!hasOwnPorts(mesh) && args.length < 4)
    return fail(
      'ConfigInvalid',
      `--mesh ${mesh} needs --inbound-port and --outbound-port (the proxy's redirect ports)`,
    );
  return ok(args);
}

function usageError(message: string): CommandOutcome {
  return commandError('manifest', EXIT.invalidConfig, { reason: 'ConfigInvalid', message });
}
