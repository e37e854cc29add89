import type { CniAuditOptions } from '../cni/run-cni-audit.js';
import type { RuntimeName } from '../cni/runtime-load.js';
import { PRESETS, type Mesh } from '../config/interception.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import type { AgentSettings } from '../node-agent/agent-settings.js';
import { NODE_TAINT } from '../node-agent/agent-api.js';
import type { TaintMatch } from '../config/flag-parsers.js';
import type { GateSettings } from '../node-agent/node-gate.js';
import { meshDefaults } from '../node-agent/node-flags.js';
import { DEFAULT_RETRY } from '../node-agent/retry-delay.js';
import { socketPathOf } from '../node-agent/cri/socket-path.js';
import type { RecheckAction } from '../node-agent/recheck/recheck-action.js';
import { NODE_COMMAND_FLAGS } from './node-command-flags.js';
import { shippedValidator } from './shipped-validator.js';

type Values = Record<string, unknown>;
type Env = Readonly<Record<string, string | undefined>>;

/** `interlock node`'s whole configuration, before anything is started. */
export interface NodeConfig {
  readonly values: Values;
  readonly settings: AgentSettings;
  /** With `--cni-audit`: the options `interlock cni-check` would take. */
  readonly cniAudit: CniAuditOptions | undefined;
  /** With `--recheck-interval`: the re-check of running meshed pods. */
  readonly recheck: NodeRecheck | undefined;
}

export interface NodeRecheck {
  readonly intervalMs: number;
  readonly socketPath: string;
  readonly action: RecheckAction;
  /** Pods checked at once, and each one's deadline: a sweep of 110 pods stays within seconds. */
  readonly concurrency: number;
  readonly podDeadlineMs: number;
}

/** The re-check with `--recheck-interval`; its CRI endpoint as a socket path. */
function recheckOf(values: Values): NodeRecheck | string | undefined {
  const intervalMs = values['recheck-interval'] as number | undefined;
  if (intervalMs === undefined) return undefined;
  const socket = socketPathOf(values['cri-endpoint'] as string);
  if (!socket.ok) return `--cri-endpoint: ${socket.error.message}`;
  return {
    intervalMs,
    socketPath: socket.value,
    action: values['recheck-action'] as RecheckAction,
    concurrency: 4,
    podDeadlineMs: Math.min(5000, intervalMs),
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
  const values = Object.fromEntries(parsed.value.values);
  const settings = settingsOf(values);
  if (typeof settings === 'string') return settings;
  const cniAudit = cniAuditOf(values);
  if (typeof cniAudit === 'string') return cniAudit;
  const recheck = recheckOf(values);
  if (typeof recheck === 'string') return recheck;
  const gate = gateOf(values, settings, cniAudit);
  if (typeof gate === 'string') return gate;
  return { values, settings: gate ? { ...settings, gate } : settings, cniAudit, recheck };
}

/** Heartbeats of the condition, in intervals: 5 min at the default 10 s, as the kubelet reports its node status. */
const HEARTBEAT_INTERVALS = 30;

/**
 * The node gate with `--report-condition` or `--startup-taint`. True is a claim that the node is
 * ready for meshed pods, and the audit is its only positive evidence: both need `--cni-audit`.
 */
function gateOf(
  values: Values,
  settings: AgentSettings,
  audit: CniAuditOptions | undefined,
): GateSettings | string | undefined {
  const condition = values['report-condition'] === true;
  const startupTaint = values['startup-taint'] as TaintMatch | undefined;
  if (!condition && !startupTaint) return undefined;
  const flag = condition ? '--report-condition' : '--startup-taint';
  if (!audit) return `${flag} needs --cni-audit: the node is ready for the mesh only on the CNI audit's clean verdict`;
  if (startupTaint?.key === NODE_TAINT.key)
    return `--startup-taint ${NODE_TAINT.key} is the breaker's own taint (--taint): give the key the kubelet registers nodes with`;
  const intervalMs = values['condition-interval'] as number;
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
function cniAuditOf(values: Values): CniAuditOptions | string | undefined {
  if (values['cni-audit'] !== true) return undefined;
  const mesh = values.mesh as Mesh;
  const meshPlugin = (values['mesh-plugin'] as string | undefined) ?? PRESETS[mesh].cniPlugin;
  if (meshPlugin === undefined) return '--cni-audit with --mesh generic needs --mesh-plugin TYPE';
  const crioDefaultNetwork = values['crio-default-network'] as string | undefined;
  return {
    confDir: values['cni-conf-dir'] as string,
    binDirs: values['cni-bin-dir'] as readonly string[],
    runtime: values.runtime as RuntimeName,
    meshPlugin,
    versionTimeoutMs: values['version-timeout'] as number,
    maxConfNum: values['max-conf-num'] as number,
    ...(crioDefaultNetwork === undefined ? {} : { crioDefaultNetwork }),
  };
}

function settingsOf(values: Values): AgentSettings | string {
  const node = values['node-name'] as string | undefined;
  if (!node) return '--node-name is required (or NODE_NAME from the downward API)';
  const preset = meshDefaults(values.mesh as Mesh);
  const window = values['breaker-window'] as number;
  const writes = values['writes-per-second'] as number;
  return {
    node,
    container: (values['container-name'] as string | undefined) ?? preset.container,
    failureExitCode: (values['failure-exit-code'] as number | undefined) ?? preset.failureExitCode,
    action: values.action as AgentSettings['action'],
    taint: values.taint === true,
    backoff: {
      baseMs: 1000,
      maxMs: 5 * 60_000,
      maxRecreations: values['max-recreations'] as number,
      windowMs: values['recreate-window'] as number,
    },
    breaker: {
      threshold: values['breaker-threshold'] as number,
      windowMs: window,
      minNamespaces: values['breaker-min-namespaces'] as number,
    },
    retry: DEFAULT_RETRY,
    queueCapacity: 1024,
    writesPerSecond: writes,
    writeBurst: writes * 2,
    trustedImages: (values['trusted-image'] as readonly string[] | undefined) ?? [],
    shipped: shippedValidator(values.mesh as Mesh),
    ...(values['watch-namespace'] ? { namespaces: values['watch-namespace'] as readonly string[] } : {}),
  };
}
