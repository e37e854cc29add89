import { EXIT } from '../config/exit-codes.js';
import type { FlagDef } from '../config/flag-def.js';
import type { Mesh } from '../config/interception.js';
import { manifestDocuments, renderJson, renderYaml, type ManifestDocument } from '../inject/manifest.js';
import { DEFAULT_IMAGE } from '../inject/validator-container.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import { INBOUND_PORT_FLAG, MESH_FLAG, OUTBOUND_PORT_FLAG } from '../config/interception-flags.js';
import { REPORT_EVENT_FLAG } from '../config/validate-config.js';
import { HELP_FLAG } from '../config/command-flags.js';
import { fail, ok, type Result } from '../reason/result.js';
import type { CommandOutcome } from './command-outcome.js';
import { WEBHOOK_MANIFEST_FLAGS } from '../webhook/webhook-manifest-flags.js';
import { webhookDocuments } from './manifest-webhook.js';

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (text: string): Result<T, 'ConfigInvalid'> =>
    (values as readonly string[]).includes(text)
      ? ok(text as T)
      : fail('ConfigInvalid', `expected ${values.join(', ')}`);
const text = (text: string): Result<string, 'ConfigInvalid'> =>
  text.trim() ? ok(text.trim()) : fail('ConfigInvalid', 'must not be empty');
const dnsName = (value: string): Result<string, 'ConfigInvalid'> =>
  /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)
    ? ok(value)
    : fail('ConfigInvalid', 'expected a DNS-1123 label (lower case, digits, -)');
const on = (): Result<boolean, 'ConfigInvalid'> => ok(true);

export const MANIFEST_FLAGS: readonly FlagDef[] = [
  MESH_FLAG,
  {
    name: 'image',
    kind: 'value',
    placeholder: 'IMAGE',
    help: `Interlock's image (default ${DEFAULT_IMAGE}); webhook: the image it puts in place of the mesh's validator.`,
    commands: ['manifest', 'inject', 'webhook'],
    parse: text,
    default: DEFAULT_IMAGE,
  },
  INBOUND_PORT_FLAG,
  OUTBOUND_PORT_FLAG,
  {
    name: 'output',
    kind: 'value',
    placeholder: 'yaml|json',
    help: 'Output format (default yaml; json has no comments).',
    commands: ['manifest'],
    parse: oneOf(['yaml', 'json'] as const),
    default: 'yaml',
  },
  {
    name: 'rules-check',
    kind: 'switch',
    help: 'Run as uid 0 with NET_ADMIN and NET_RAW so the NAT rules are read and checked (--rules required).',
    commands: ['manifest', 'inject'],
    parse: on,
  },
  REPORT_EVENT_FLAG,
  {
    name: 'native-sidecar',
    kind: 'switch',
    help: 'The proxy is a native sidecar: state (and in inject, check) that the validator runs before it.',
    commands: ['manifest', 'inject'],
    parse: on,
  },
  {
    name: 'namespace',
    kind: 'value',
    placeholder: 'NS',
    help: 'Namespace of the RBAC documents (default default).',
    commands: ['manifest'],
    parse: dnsName,
    default: 'default',
  },
  {
    name: 'service-account',
    kind: 'value',
    placeholder: 'NAME',
    help: 'ServiceAccount the pods run as, bound to events create (default interlock).',
    commands: ['manifest'],
    parse: dnsName,
    default: 'interlock',
  },
  {
    name: 'node-agent',
    kind: 'switch',
    help: 'Print the node agent (DaemonSet and its RBAC) instead of the init container.',
    commands: ['manifest'],
    parse: on,
  },
  ...WEBHOOK_MANIFEST_FLAGS,
  HELP_FLAG,
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
): Result<{ values: FlagValues }, 'ConfigInvalid'> {
  const parsed = parseCommandLine(command, argv, env, flags);
  if (!parsed.ok) return parsed;
  // The mesh's default (generic) is validate's; here only a mesh the operator named counts.
  const values = new Map(parsed.value.values);
  if (!parsed.value.sources.has('mesh')) values.delete('mesh');
  if (values.get('report-event') === false) values.delete('report-event');
  return ok({ values });
}

export function flagHelp(usage: string, flags: readonly FlagDef[]): string {
  const lines = flags.map(
    (flag) => `  --${flag.name}${flag.placeholder ? ` ${flag.placeholder}` : ''}`.padEnd(36) + flag.help,
  );
  return `${usage}\n\nFlags:\n${lines.join('\n')}\n`;
}

/** The node agent's documents (issue 11): its DaemonSet and RBAC, as plain data. */
export type NodeAgentManifest = (options: {
  image: string;
  namespace?: string;
  mesh?: Mesh;
}) => Promise<readonly object[]>;

const nodeAgentDocuments: NodeAgentManifest = async (options) =>
  (await import('../node-agent/manifest.js')).nodeAgentManifest(options);

export async function runManifest(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  nodeAgent: NodeAgentManifest = nodeAgentDocuments,
): Promise<CommandOutcome> {
  const parsed = parseCommandFlags('manifest', argv, MANIFEST_FLAGS, env);
  if (!parsed.ok) return usageError(parsed.error.message);
  const { values } = parsed.value;
  if (values.has('help'))
    return {
      exitCode: 0,
      stdout: flagHelp('interlock manifest --mesh linkerd|istio|generic [flags]', MANIFEST_FLAGS),
      stderr: '',
    };
  const image = values.get('image') as string;
  const namespace = values.get('namespace') as string;
  let documents: ManifestDocument[];
  if (values.has('webhook')) {
    const webhook = webhookDocuments(values, argv);
    if (!webhook.ok) return usageError(webhook.error.message);
    documents = webhook.value;
  } else if (values.has('node-agent')) {
    const mesh = values.get('mesh') as Mesh | undefined;
    // --namespace defaults to `default` for the validator's RBAC; the agent has its own default namespace.
    const explicitNamespace = argv.some((arg) => arg === '--namespace' || arg.startsWith('--namespace='));
    documents = (
      await nodeAgent({ image, ...(explicitNamespace ? { namespace } : {}), ...(mesh ? { mesh } : {}) })
    ).map((value) => ({ value: value as Record<string, unknown> }));
  } else {
    const mesh = values.get('mesh') as Mesh | undefined;
    if (!mesh) return usageError('--mesh is required: linkerd, istio or generic');
    const ports = portArgs(values, mesh);
    if (!ports.ok) return usageError(ports.error.message);
    documents = manifestDocuments({
      mesh,
      image,
      extraArgs: ports.value,
      namespace,
      serviceAccount: values.get('service-account') as string,
      rulesCheck: values.has('rules-check'),
      reportEvent: values.has('report-event'),
      nativeSidecar: values.has('native-sidecar'),
    });
  }
  const stdout = values.get('output') === 'json' ? renderJson(documents) : renderYaml(documents);
  return { exitCode: 0, stdout, stderr: '' };
}

/**
 * validate's port flags from --inbound-port/--outbound-port; the generic preset has no ports, so
 * without both a generic validator could only ever fail with ConfigInvalid.
 */
function portArgs(values: FlagValues, mesh: Mesh | undefined): Result<string[], 'ConfigInvalid'> {
  const args = ['inbound-port', 'outbound-port'].flatMap((name) =>
    values.has(name) ? [`--${name}`, String(values.get(name))] : [],
  );
  if (mesh === 'generic' && args.length < 4)
    return fail(
      'ConfigInvalid',
      "--mesh generic needs --inbound-port and --outbound-port (the proxy's redirect ports)",
    );
  return ok(args);
}

function usageError(message: string): CommandOutcome {
  return { exitCode: EXIT.invalidConfig, stdout: '', stderr: `interlock manifest: ConfigInvalid: ${message}\n` };
}
