import { ambientAnnotationsRead, type AmbientPodAnnotation } from '../../../mesh/istio-ambient.js';
import { ISTIO_CNI_VERSION_FLAG } from '../../../config/interception-flags.js';
import type { CniAuditOptions } from '../../../cni/run-cni-audit.js';
import { PRESETS, type Mesh } from '../../../config/interception.js';
import type { ListenAddress } from '../../../config/flag-parsers.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagValue, givenValue, type ParsedFlags } from '../../../config/parsed-flags.js';
import { FAILURE_EXIT_CODE_FLAG, LOG_LEVEL_FLAG, type LogLevel } from '../../../config/validate-config.js';
import { MESH_FLAG } from '../../../config/interception-flags.js';
import { meshIdentity } from '../../../mesh/meshes.js';
import type { AgentSettings } from '../../../node-agent/agent-settings.js';
import { NODE_TAINT } from '../../../node-agent/agent-api.js';
import type { GateSettings } from '../../../node-agent/node-gate.js';
import type { NodeAgentManifestOptions } from '../../../node-agent/manifest.js';
import { ok, type Result } from '../../../reason/result.js';
import { DEFAULT_RETRY } from '../../../node-agent/retry-delay.js';
import { socketPathOf } from '../../../node-agent/cri/socket-path.js';
import { RUNTIME_SOCKETS } from '../../../cni/runtime-sockets.js';
import type { RecheckAction } from '../../../node-agent/recheck/recheck-action.js';
import {
  CNI_BIN_DIR_FLAG,
  CNI_CONF_DIR_FLAG,
  CNI_MULTUS_CONF_DIR_FLAG,
  CRIO_DEFAULT_NETWORK_FLAG,
  MAX_CONF_NUM_FLAG,
  MESH_PLUGIN_FLAG,
  RUNTIME_FLAG,
  VERSION_TIMEOUT_FLAG,
} from '../cni-check/flags.js';
import {
  ACTION_FLAG,
  BREAKER_MIN_NAMESPACES_FLAG,
  BREAKER_THRESHOLD_FLAG,
  BREAKER_WINDOW_FLAG,
  CNI_AUDIT_FLAG,
  CONDITION_INTERVAL_FLAG,
  CONTAINER_NAME_FLAG,
  CRI_ENDPOINT_FLAG,
  NETNS_DIR_FLAG,
  LABEL_SELECTOR_FLAG,
  LISTEN_FLAG,
  MAX_RECREATIONS_FLAG,
  NODE_COMMAND_FLAGS,
  NODE_NAME_FLAG,
  RECHECK_ACTION_FLAG,
  RECHECK_INTERVAL_FLAG,
  RECREATE_WINDOW_FLAG,
  REPORT_CONDITION_FLAG,
  STARTUP_TAINT_FLAG,
  TAINT_FLAG,
  TRUSTED_IMAGE_FLAG,
  WATCH_NAMESPACE_FLAG,
  WRITES_PER_SECOND_FLAG,
} from './flags.js';
import { shippedValidator } from './shipped-validator.js';

type Env = Readonly<Record<string, string | undefined>>;

/** `interlock node`'s whole configuration, before anything is started. */
export interface NodeConfig {
  readonly settings: AgentSettings;
  readonly logLevel: LogLevel;
  readonly listen: ListenAddress;
  readonly labelSelector: string | undefined;
  /** With `--cni-audit`: the options `interlock cni-check` would take. */
  readonly cniAudit: CniAuditOptions | undefined;
  /**
   * With `--cni-audit` or `--recheck-interval`: the runtime's CRI socket (the audit asks it what it
   * loaded), and whether `--cri-endpoint` named it (then an unanswered question is an error).
   */
  readonly criSocket: { readonly path: string; readonly named: boolean } | undefined;
  /**
   * With `--cni-audit` and `--cni-multus-conf-dir` named (the node runs Multus): the audit reads
   * NetworkAttachmentDefinitions and the node's meshed pods from the API.
   */
  readonly readsAttachments: boolean;
  /** With `--recheck-interval`: the re-check of running meshed pods. */
  readonly recheck: NodeRecheck | undefined;
}

export interface NodeRecheck {
  readonly intervalMs: number;
  readonly socketPath: string;
  /** `--netns-dir`: where the runtime mounts pods' namespaces, as the manifest mounts it. */
  readonly netnsDir: string;
  readonly action: RecheckAction;
  /** Pods checked at once, and each one's deadline: a sweep of 110 pods stays within seconds. */
  readonly concurrency: number;
  readonly podDeadlineMs: number;
  /** The ambient pod annotations istio-cni of `--istio-cni-version` reads (the newest's without it). */
  readonly ambientReads: ReadonlySet<AmbientPodAnnotation>;
}

/** The preset validator container and failure code of a mesh. */
export function meshDefaults(mesh: Mesh): { container: string; failureExitCode: number } {
  const identity = meshIdentity(mesh);
  return { container: identity.containers.validator, failureExitCode: identity.failureExitCode };
}

/**
 * The runtime's CRI socket: `--cri-endpoint` when given, else the default socket of `--runtime`
 * (containerd's, or CRI-O's with `--runtime crio`).
 */
function criSocketOf(parsed: ParsedFlags): Result<string, 'ConfigInvalid'> {
  const endpoint = givenValue(parsed, CRI_ENDPOINT_FLAG);
  if (endpoint === undefined) return ok(RUNTIME_SOCKETS[flagValue(parsed, RUNTIME_FLAG)]);
  return socketPathOf(endpoint);
}

/** The re-check with `--recheck-interval`; its CRI endpoint as a socket path. */
function recheckOf(parsed: ParsedFlags, socketPath: string): NodeRecheck | undefined {
  const intervalMs = flagValue(parsed, RECHECK_INTERVAL_FLAG);
  if (intervalMs === undefined) return undefined;
  return {
    intervalMs,
    socketPath,
    netnsDir: flagValue(parsed, NETNS_DIR_FLAG),
    action: flagValue(parsed, RECHECK_ACTION_FLAG),
    concurrency: 4,
    podDeadlineMs: Math.min(5000, intervalMs),
    ambientReads: ambientAnnotationsRead(flagValue(parsed, ISTIO_CNI_VERSION_FLAG)),
  };
}

/**
 * The one configuration check of `interlock node`: the command runs it, and `manifest --node-agent`
 * runs it on the DaemonSet it prints, so nothing printed crash-loops on 64. Pure: no file, socket
 * or API is touched. A string is the refusal's sentence, naming the flag.
 */
export function nodeConfigOf(argv: readonly string[], env: Env): NodeConfig | string {
  const parsed = parseCommandLine('node', argv, env, NODE_COMMAND_FLAGS);
  if (!parsed.ok) return parsed.error.message;
  const settings = settingsOf(parsed.value);
  if (typeof settings === 'string') return settings;
  const cniAudit = cniAuditOf(parsed.value);
  if (typeof cniAudit === 'string') return cniAudit;
  const socket = criSocketOf(parsed.value);
  if (!socket.ok) return `--cri-endpoint: ${socket.error.message}`;
  const recheck = recheckOf(parsed.value, socket.value);
  const gate = gateOf(parsed.value, settings, cniAudit);
  if (typeof gate === 'string') return gate;
  return {
    settings: gate ? { ...settings, gate } : settings,
    logLevel: flagValue(parsed.value, LOG_LEVEL_FLAG),
    listen: flagValue(parsed.value, LISTEN_FLAG),
    labelSelector: flagValue(parsed.value, LABEL_SELECTOR_FLAG),
    cniAudit,
    criSocket:
      cniAudit || recheck
        ? { path: socket.value, named: givenValue(parsed.value, CRI_ENDPOINT_FLAG) !== undefined }
        : undefined,
    readsAttachments: cniAudit !== undefined && givenValue(parsed.value, CNI_MULTUS_CONF_DIR_FLAG) !== undefined,
    recheck,
  };
}

/** Heartbeats of the condition, in intervals: 5 min at the default 10 s, as the kubelet reports its node status. */
const HEARTBEAT_INTERVALS = 30;

/**
 * The node gate with `--report-condition` or `--startup-taint`. True is a claim that the node is
 * ready for meshed pods, and the audit is its only positive evidence: both need `--cni-audit`.
 */
function gateOf(
  parsed: ParsedFlags,
  settings: AgentSettings,
  audit: CniAuditOptions | undefined,
): GateSettings | string | undefined {
  const condition = flagValue(parsed, REPORT_CONDITION_FLAG);
  const startupTaint = flagValue(parsed, STARTUP_TAINT_FLAG);
  if (!condition && !startupTaint) return undefined;
  const flag = condition ? '--report-condition' : '--startup-taint';
  if (!audit) return `${flag} needs --cni-audit: the node is ready for the mesh only on the CNI audit's clean verdict`;
  if (startupTaint?.key === NODE_TAINT.key)
    return `--startup-taint ${NODE_TAINT.key} is the breaker's own taint (--taint): give the key the kubelet registers nodes with`;
  const intervalMs = flagValue(parsed, CONDITION_INTERVAL_FLAG);
  return {
    condition,
    startupTaint,
    intervalMs,
    heartbeatMs: intervalMs * HEARTBEAT_INTERVALS,
    policy: { windowMs: settings.breaker.windowMs, plugin: audit.meshPlugin },
    breaker: settings.breaker,
  };
}

/** The CNI audit the agent runs with `--cni-audit`: the same options `interlock cni-check` takes. */
function cniAuditOf(parsed: ParsedFlags): CniAuditOptions | string | undefined {
  if (!flagValue(parsed, CNI_AUDIT_FLAG)) return undefined;
  const mesh = flagValue(parsed, MESH_FLAG);
  const meshPlugin = flagValue(parsed, MESH_PLUGIN_FLAG) ?? PRESETS[mesh].cniPlugin;
  if (meshPlugin === undefined) return '--cni-audit with --mesh generic needs --mesh-plugin TYPE';
  const crioDefaultNetwork = flagValue(parsed, CRIO_DEFAULT_NETWORK_FLAG);
  return {
    confDir: flagValue(parsed, CNI_CONF_DIR_FLAG),
    multusConfDir: flagValue(parsed, CNI_MULTUS_CONF_DIR_FLAG),
    binDirs: flagValue(parsed, CNI_BIN_DIR_FLAG),
    runtime: flagValue(parsed, RUNTIME_FLAG),
    meshPlugin,
    versionTimeoutMs: flagValue(parsed, VERSION_TIMEOUT_FLAG),
    maxConfNum: flagValue(parsed, MAX_CONF_NUM_FLAG),
    ...(crioDefaultNetwork === undefined ? {} : { crioDefaultNetwork }),
  };
}

function settingsOf(parsed: ParsedFlags): AgentSettings | string {
  const node = flagValue(parsed, NODE_NAME_FLAG);
  if (!node) return '--node-name is required (or NODE_NAME from the downward API)';
  const mesh = flagValue(parsed, MESH_FLAG);
  const preset = meshDefaults(mesh);
  const writes = flagValue(parsed, WRITES_PER_SECOND_FLAG);
  const namespaces = flagValue(parsed, WATCH_NAMESPACE_FLAG);
  return {
    node,
    container: flagValue(parsed, CONTAINER_NAME_FLAG) ?? preset.container,
    failureExitCode: flagValue(parsed, FAILURE_EXIT_CODE_FLAG) ?? preset.failureExitCode,
    action: flagValue(parsed, ACTION_FLAG),
    taint: flagValue(parsed, TAINT_FLAG),
    backoff: {
      baseMs: 1000,
      maxMs: 5 * 60_000,
      maxRecreations: flagValue(parsed, MAX_RECREATIONS_FLAG),
      windowMs: flagValue(parsed, RECREATE_WINDOW_FLAG),
    },
    breaker: {
      threshold: flagValue(parsed, BREAKER_THRESHOLD_FLAG),
      windowMs: flagValue(parsed, BREAKER_WINDOW_FLAG),
      minNamespaces: flagValue(parsed, BREAKER_MIN_NAMESPACES_FLAG),
    },
    retry: DEFAULT_RETRY,
    queueCapacity: 1024,
    writesPerSecond: writes,
    writeBurst: writes * 2,
    trustedImages: flagValue(parsed, TRUSTED_IMAGE_FLAG) ?? [],
    shipped: shippedValidator(mesh),
    ...(namespaces ? { namespaces } : {}),
  };
}

/**
 * What `manifest --node-agent` prints from the agent's flags: its action and taint, the port of a
 * `--listen` the operator gave, the directories `--cni-audit` reads, the socket the re-check asks.
 */
export function agentManifestOptions(
  parsed: ParsedFlags,
  listenGiven: boolean,
): Pick<NodeAgentManifestOptions, 'action' | 'taint' | 'listenPort' | 'cni' | 'recheck' | 'gate'> {
  const socket = criSocketOf(parsed);
  const recheck = flagValue(parsed, RECHECK_INTERVAL_FLAG) !== undefined && socket.ok;
  return {
    action: flagValue(parsed, ACTION_FLAG),
    taint: flagValue(parsed, TAINT_FLAG),
    ...(listenGiven ? { listenPort: flagValue(parsed, LISTEN_FLAG).port } : {}),
    ...(flagValue(parsed, CNI_AUDIT_FLAG) ? { cni: cniPaths(parsed, socket.ok ? socket.value : undefined) } : {}),
    ...(recheck ? { recheck: { socketPath: socket.value, netnsDir: flagValue(parsed, NETNS_DIR_FLAG) } } : {}),
    ...gateOption(parsed),
  };
}

/**
 * The host paths the audit reads: its directories (Multus's only when named: a hostPath that must
 * exist) and the runtime's socket, which it asks what the runtime loaded.
 */
function cniPaths(parsed: ParsedFlags, criSocket: string | undefined): NonNullable<NodeAgentManifestOptions['cni']> {
  const multusConfDir = givenValue(parsed, CNI_MULTUS_CONF_DIR_FLAG);
  return {
    confDir: flagValue(parsed, CNI_CONF_DIR_FLAG),
    binDirs: flagValue(parsed, CNI_BIN_DIR_FLAG),
    ...(multusConfDir === undefined ? {} : { multusConfDir }),
    ...(criSocket === undefined ? {} : { criSocket }),
  };
}

/** With `--report-condition` or `--startup-taint`, the node gate's rights; without, nothing changes. */
function gateOption(parsed: ParsedFlags): Pick<NodeAgentManifestOptions, 'gate'> {
  const condition = flagValue(parsed, REPORT_CONDITION_FLAG);
  const startupTaint = flagValue(parsed, STARTUP_TAINT_FLAG)?.key;
  return condition || startupTaint ? { gate: { condition, startupTaint } } : {};
}
