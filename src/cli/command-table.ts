import { EXIT, EXIT_MEANINGS } from '../config/exit-codes.js';
import { EXPLAIN_FLAGS } from '../config/explain-flags.js';
import { VALIDATE_FLAGS } from '../config/validate-config.js';
import { failureCodesText, meshIdentity, MESHES } from '../mesh/meshes.js';
import { CHECK_FLAGS } from './commands/check/flags.js';
import { CNI_CHECK_FLAGS } from './commands/cni-check/flags.js';
import type { CommandSpec, EnvironmentVariable } from './command-spec.js';
import { COMPLETION_FLAGS, SHELLS } from './commands/completion/flags.js';
import { INJECT_FLAGS } from './commands/inject/flags.js';
import { AGENT_FLAGS, MANIFEST_FLAGS } from './commands/manifest/flags.js';
import { NODE_COMMAND_FLAGS } from './commands/node/flags.js';
import { VERSION_COMMAND_FLAGS } from './commands/version/flags.js';
import { WEBHOOK_COMMAND_FLAGS } from './commands/webhook/flags.js';
import { MAX_INPUT_BYTES } from './input/read-input-file.js';
import { MAX_MANIFEST_BYTES, mebibytes } from './input/read-manifest-input.js';

type Code = keyof typeof EXIT;
const code = (key: Code, meaning: string = EXIT_MEANINGS[key]): readonly [string, string] => [
  String(EXIT[key]),
  meaning,
];
const MESH_FAILURE = (what: string, flag = ', or --failure-exit-code'): readonly [string, string] => [
  MESHES.map((mesh) => meshIdentity(mesh).failureExitCode).join('/'),
  `${what}: the mesh's failure code (${failureCodesText()})${flag}`,
];
const USAGE = code('invalidConfig', 'invalid flags or environment');

const CLUSTER: readonly EnvironmentVariable[] = [
  {
    name: 'KUBERNETES_SERVICE_HOST',
    help: 'With KUBERNETES_SERVICE_PORT: the API server, in a pod (with its service account token).',
  },
  { name: 'KUBECONFIG', help: 'Outside a pod: the kubeconfig file to reach the API server with.' },
];

/** Every command of `interlock`, in the order `interlock help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'validate',
    usage: '[flags]',
    summary: "Init container: prove the mesh intercepts this pod's traffic, or fail with the reason.",
    description: [
      "Proves, within --timeout, that the pod's network is set up and that a TCP connection the mesh must capture arrives at the proxy's redirect port, for every address family the pod has; with CAP_NET_ADMIN it also reads and checks the NAT rules. Exit 0 only on a proven pass.",
    ],
    flags: VALIDATE_FLAGS,
    environment: [
      {
        name: 'POD_NAME',
        help: 'With --report-event: the pod the Warning Event is posted on (also POD_NAMESPACE, POD_UID; from the downward API).',
      },
      ...CLUSTER,
    ],
    exitCodes: [
      code('pass', 'interception proven'),
      MESH_FAILURE('the pod is not meshed'),
      code('invalidConfig'),
      code('internalError'),
      code('outputError'),
      code('sigint'),
      code('sigterm'),
    ],
    load: async () => {
      const { runValidateCommand } = await import('./commands/validate/run.js');
      return (argv, context) => runValidateCommand(argv, context.env, context.stopSignal(), context.adapters);
    },
  },
  {
    name: 'explain',
    usage: '--iptables-save FILE|--nft-ruleset FILE [flags]',
    summary: 'Offline: check saved iptables/nft dumps against the mesh configuration.',
    description: [
      `Runs the rules analysis of 'interlock validate' on saved dumps: every region of packets the configuration speaks of, where the rules send every packet of it, and which rule decided. Dumps are regular files, at most ${mebibytes(MAX_INPUT_BYTES)} in all.`,
    ],
    flags: EXPLAIN_FLAGS,
    exitCodes: [
      code('pass', 'every expectation holds'),
      MESH_FAILURE('an expectation fails or cannot be decided'),
      USAGE,
      code('dataError', `a dump does not parse, or the dumps are larger than ${mebibytes(MAX_INPUT_BYTES)}`),
      code('noInput', 'a dump cannot be read (missing, unreadable, not a regular file)'),
      code('internalError'),
      code('outputError'),
    ],
    load: async () => {
      const { runExplain } = await import('./commands/explain/run.js');
      return (argv, context) => runExplain(argv, context.env);
    },
  },
  {
    name: 'manifest',
    usage: '--mesh MESH [flags]',
    summary:
      "Print the validator's init container for a pod spec, or objects for kubectl apply: its Event RBAC (--rbac), the node agent (--node-agent) or the admission webhook (--webhook).",
    description: [
      'By default prints one init container, for the mesh named by --mesh, to paste under spec.initContainers (inject adds it for you). --rbac, --node-agent and --webhook print whole objects instead; --mesh applies to the init container and the node agent only.',
    ],
    flags: MANIFEST_FLAGS,
    passedOn: AGENT_FLAGS,
    exitCodes: [code('pass', 'printed'), USAGE, code('outputError')],
    load: async () => {
      const { runManifest } = await import('./commands/manifest/run.js');
      return (argv, context) => runManifest(argv, context.env);
    },
  },
  {
    name: 'inject',
    usage: '[-f FILE|-] [flags]',
    summary: 'Add the validator to every pod template of Kubernetes YAML (-f FILE or stdin).',
    description: [
      'Reads Kubernetes YAML or JSON, adds the validator init container to every pod template (Pod, Deployment, StatefulSet, DaemonSet, Job, CronJob, ...) and prints the result.',
    ],
    flags: INJECT_FLAGS,
    exitCodes: [
      code('pass', 'printed'),
      USAGE,
      code('dataError', `the input does not parse, or is larger than ${mebibytes(MAX_MANIFEST_BYTES)}`),
      code('noInput', 'the input cannot be read'),
      code('outputError'),
    ],
    load: async () => {
      const { runInject } = await import('./commands/inject/run.js');
      return (argv, context) => runInject(argv, context.env);
    },
  },
  {
    name: 'node',
    // --mesh's choices are in its help: with four meshes they would push this line past 80 columns.
    usage: '--node-name NAME --mesh MESH [flags]',
    summary: 'Node agent: recreate pods the CNI failed, without ever looping; audit the CNI config.',
    description: [
      "Runs as a DaemonSet. Watches this node's pods; a pod whose validator failed with the mesh's failure code was started before the CNI set it up, and is recreated (or labelled), with a per-owner back-off and a node-wide breaker. With --cni-audit it also audits the node's CNI configuration, as 'interlock cni-check' does.",
    ],
    flags: NODE_COMMAND_FLAGS,
    environment: CLUSTER,
    exitCodes: [
      code('pass', 'stopped by SIGTERM or SIGINT after draining'),
      USAGE,
      code('noInput', 'no Kubernetes API to talk to (no in-cluster service account, no KUBECONFIG)'),
      code('internalError'),
    ],
    load: async () => {
      const { runNodeCommand } = await import('./commands/node/run.js');
      return (argv, context) => runNodeCommand(argv, context.env, context.stopSignal());
    },
  },
  {
    name: 'cni-check',
    usage: '--mesh MESH [flags]',
    summary: 'Predict which CNI configuration the runtime loads and check the mesh plugin is chained.',
    description: [
      "Predicts which CNI configuration file the node's container runtime loads, exactly as the runtime does, and checks that pods landing here get the primary network and then the mesh plugin: the mesh plugin chained after the primary plugin in that file, every plugin binary present and executable, the file's cniVersion supported by every plugin (asked with CNI_COMMAND=VERSION).",
    ],
    flags: CNI_CHECK_FLAGS,
    exitCodes: [
      code('pass', 'the configuration sets pods up with the mesh'),
      MESH_FAILURE('it does not', ''),
      USAGE,
      code('dataError', 'the directory holds more than an audit reads'),
      code('noInput', 'the directory cannot be read'),
      code('internalError'),
    ],
    load: async () => {
      const { runCniCheck } = await import('./commands/cni-check/run.js');
      return (argv, context) => runCniCheck(argv, context.env, context.stopSignal());
    },
  },
  {
    name: 'webhook',
    usage: '[--tls-cert FILE --tls-key FILE] [flags]',
    summary: "Admission webhook: put Interlock in place of the mesh's validator as pods are created.",
    description: [
      "Serves AdmissionReview admission.k8s.io/v1 over TLS at POST /mutate. For a Pod CREATE holding linkerd-network-validator or istio-validation it answers a JSONPatch that runs Interlock in that container, in the mesh's place; every other request is allowed unchanged. Also /healthz, /readyz and /metrics. The serving certificate is reloaded when its files change. Runs until SIGTERM, then drains in-flight requests. 'interlock manifest --webhook' prints its deployment (docs/admission.md).",
    ],
    flags: WEBHOOK_COMMAND_FLAGS,
    exitCodes: [
      code('pass', 'stopped by SIGTERM or SIGINT after draining'),
      USAGE,
      code('noInput', 'the serving certificate or key cannot be read or parsed, or the address cannot be listened on'),
      code('internalError'),
    ],
    load: async () => {
      const { runWebhookCommand } = await import('./commands/webhook/run.js');
      return (argv, context) => runWebhookCommand(argv, context.env, context.stopSignal());
    },
  },
  {
    name: 'check',
    usage: '[--context NAME] [-o text|json] [flags]',
    summary: 'Check the installed webhook and node agent against the cluster, and say what to fix.',
    description: [
      "Reads the cluster as kubectl does (kubeconfig and context) and checks what 'interlock manifest --webhook' and '--node-agent' installed: the MutatingWebhookConfiguration, the namespaces it selects, its Service's ready endpoints, the Deployment, the caBundle and the serving certificate (signature, name, expiry); the node agent's namespace, a ready agent on every node and the RBAC its --action and --taint need; and that every part runs the same image. Each failure says what to fix. Only reads: nothing is changed.",
      "--data-plane adds the meshed pods, as 'linkerd check --proxy' does; --pre checks, before an install, what it needs of the cluster; --wait re-runs until the checks pass.",
    ],
    flags: CHECK_FLAGS,
    exitCodes: [
      code('pass', 'every check passed (warnings aside)'),
      code('checkFailed', 'a check failed: the cluster is not reachable, a part is broken, or nothing is installed'),
      USAGE,
      code('noInput', 'no usable kubeconfig (missing, unparsable, no such context)'),
      code('internalError'),
    ],
    load: async () => {
      const { runCheck } = await import('./commands/check/run.js');
      return (argv, context) => runCheck(argv, context.env, undefined, { stopSignal: context.stopSignal });
    },
  },
  {
    name: 'version',
    usage: '[--output text|json]',
    summary: 'Print the version, the commit and date of the build, and the Node.js version.',
    description: [],
    flags: VERSION_COMMAND_FLAGS,
    exitCodes: [code('pass', 'printed'), USAGE],
    load: async () => (await import('./commands/version/run.js')).runVersion,
  },
  {
    name: 'completion',
    usage: SHELLS.join('|'),
    summary: 'Print the shell completion script for bash, zsh or fish.',
    description: [
      'bash: source <(interlock completion bash). zsh: interlock completion zsh > "${fpath[1]}/_interlock". fish: interlock completion fish > ~/.config/fish/completions/interlock.fish.',
    ],
    flags: COMPLETION_FLAGS,
    positional: SHELLS,
    exitCodes: [code('pass', 'printed'), USAGE],
    load: async () => {
      const { runCompletion } = await import('./commands/completion/run.js');
      return (argv) => runCompletion(argv, COMMANDS);
    },
  },
];

export function commandSpec(name: string): CommandSpec | undefined {
  return COMMANDS.find((spec) => spec.name === name);
}
