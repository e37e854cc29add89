import { formatDuration } from '../../../config/duration.js';
import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { DefaultedFlag, FlagDef } from '../../../config/flag-def.js';
import {
  oneOf,
  parseBoolean,
  parseAbsoluteDir,
  parseCriEndpoint,
  parseDuration,
  parseListenAddress,
  parseNameList,
  parseNonBlank,
  parseTaintMatch,
  parseSwitch,
  parseWholeNumber,
  showListenAddress,
  type ListenAddress,
  type TaintMatch,
} from '../../../config/flag-parsers.js';
import { MESH_FLAG, ISTIO_CNI_VERSION_FLAG } from '../../../config/interception-flags.js';
import { FAILURE_EXIT_CODE_FLAG, LOG_LEVEL_FLAG } from '../../../config/validate-config.js';
import { meshIdentities } from '../../../mesh/meshes.js';
import { DEFAULT_NETNS_DIR } from '../../../node-agent/netns-dir.js';
import { NODE_ACTIONS, type NodeAction } from '../../../node-agent/node-action.js';
import { RECHECK_ACTIONS, type RecheckAction } from '../../../node-agent/recheck/recheck-action.js';
import { CNI_AUDIT_FLAGS } from '../cni-check/flags.js';

export const NODE_NAME_FLAG: FlagDef<string> = {
  name: 'node-name',
  kind: 'value',
  env: 'NODE_NAME',
  placeholder: 'NAME',
  help: 'This node (the downward API spec.nodeName); only its pods are watched.',
  parse: parseNonBlank('expected a non-empty value'),
};

export const CONTAINER_NAME_FLAG: FlagDef<string> = {
  name: 'container-name',
  kind: 'value',
  placeholder: 'NAME',
  help: `The validator init container (${meshIdentities()
    .map((identity) => identity.containers.validator)
    .join(', ')}).`,
  parse: parseNonBlank('expected a non-empty value'),
};

export const ACTION_FLAG: DefaultedFlag<NodeAction> = {
  name: 'action',
  kind: 'value',
  placeholder: 'delete|label|none',
  help: 'What to do with a pod the CNI failed: delete it, label it interlock.dev/blocked, or only report.',
  parse: oneOf<NodeAction>(NODE_ACTIONS, { say: 'one of', exact: true }),
  default: 'delete',
};

export const TAINT_FLAG: DefaultedFlag<boolean> = {
  name: 'taint',
  kind: 'switch',
  help: 'While the breaker is open, taint the node interlock.dev/cni-not-ready:NoSchedule.',
  parse: parseSwitch,
  default: false,
};

export const BREAKER_THRESHOLD_FLAG: DefaultedFlag<number> = {
  name: 'breaker-threshold',
  kind: 'value',
  placeholder: 'N',
  help: 'Blocked pods of more than N distinct owners within the breaker window open the breaker (default {default}); one owner counts once, however often its pods fail.',
  parse: parseWholeNumber(1, 10_000),
  default: 5,
};

export const BREAKER_MIN_NAMESPACES_FLAG: DefaultedFlag<number> = {
  name: 'breaker-min-namespaces',
  kind: 'value',
  placeholder: 'N',
  help: 'Those owners must span at least N namespaces (default {default}), so one tenant cannot open the breaker alone; 1 when every workload shares one namespace.',
  parse: parseWholeNumber(1, 1000),
  default: 2,
};

export const BREAKER_WINDOW_FLAG: DefaultedFlag<number> = {
  name: 'breaker-window',
  kind: 'value',
  placeholder: 'DURATION',
  help: 'The breaker window, and how long the node must stay healthy to close it (default {default}).',
  parse: parseDuration(100, 86_400_000),
  default: 60_000,
  // Written in seconds, as the breaker's docs speak of it.
  showDefault: (ms: number) => `${ms / 1000}s`,
};

export const MAX_RECREATIONS_FLAG: DefaultedFlag<number> = {
  name: 'max-recreations',
  kind: 'value',
  placeholder: 'N',
  help: "An owner's pods recreated N times within the recreate window are left alone (default {default}).",
  parse: parseWholeNumber(1, 1000),
  default: 3,
};

export const RECREATE_WINDOW_FLAG: DefaultedFlag<number> = {
  name: 'recreate-window',
  kind: 'value',
  placeholder: 'DURATION',
  help: 'The per-owner recreation window (default {default}).',
  parse: parseDuration(100, 86_400_000),
  default: 600_000,
  showDefault: formatDuration,
};

export const WRITES_PER_SECOND_FLAG: DefaultedFlag<number> = {
  name: 'writes-per-second',
  kind: 'value',
  placeholder: 'N',
  help: 'API writes (deletes, patches, Events) per second, shared (default {default}).',
  parse: parseWholeNumber(1, 1000),
  default: 5,
  // config.ts lets a burst of twice the rate through.
  showDefault: (rate: number) => `${rate}, burst ${rate * 2}`,
};

export const LABEL_SELECTOR_FLAG: FlagDef<string> = {
  name: 'label-selector',
  kind: 'value',
  placeholder: 'SELECTOR',
  help: 'Watch only pods matching this label selector (besides spec.nodeName).',
  parse: parseNonBlank('expected a non-empty value'),
};

export const WATCH_NAMESPACE_FLAG: FlagDef<readonly string[]> = {
  name: 'watch-namespace',
  kind: 'value',
  placeholder: 'NS[,NS]',
  help: 'Look only at pods in these namespaces (default: every namespace).',
  parse: parseNameList,
};

export const TRUSTED_IMAGE_FLAG: FlagDef<readonly string[]> = {
  name: 'trusted-image',
  kind: 'value',
  placeholder: 'REPO[,REPO]',
  help: "Interlock's image repositories (or sha256: digests): only validators the kubelet reports running one of them, as shipped, count toward the breaker (without it, in a pod: its own image's repository, read from its pod (POD_NAME); else none).",
  parse: parseNameList,
};

export const LISTEN_FLAG: DefaultedFlag<ListenAddress> = {
  name: 'listen',
  kind: 'value',
  env: 'INTERLOCK_LISTEN',
  placeholder: 'HOST:PORT',
  help: '/metrics, /healthz and /readyz (default {default}).',
  parse: parseListenAddress('0.0.0.0:9090'),
  default: { host: '0.0.0.0', port: 9090 },
  showDefault: showListenAddress,
};

export const CNI_AUDIT_FLAG: DefaultedFlag<boolean> = {
  name: 'cni-audit',
  kind: 'switch',
  env: 'INTERLOCK_CNI_AUDIT',
  help: "Audit the node's CNI configuration (as `interlock cni-check`, with its --cni-* flags) on file events and every 30 s: an Event on the Node when the verdict changes, a metric; a failing audit opens the breaker (and taints with --taint) only with a validator failure on the node within the breaker window.",
  // Every switch read from the environment takes the same words (INTERLOCK_TPROXY=1 and =yes too).
  parse: parseBoolean,
  default: false,
};

export const RECHECK_INTERVAL_FLAG: FlagDef<number> = {
  name: 'recheck-interval',
  kind: 'value',
  env: 'INTERLOCK_RECHECK_INTERVAL',
  placeholder: 'DURATION',
  help: "Re-check every running meshed pod of this node this often (`1m`; off by default): its rules, read in its network namespace found through the runtime (--cri-endpoint), checked as its validator checks them. Two sweeps in a row that find the capture lost post a CaptureLost Warning on the pod (ZtunnelNotListening: an ambient pod's rules intact, its listeners gone). Needs the privileged agent (`manifest --node-agent --recheck-interval`, docs/node-agent.md).",
  parse: parseDuration(1000, 86_400_000),
};

export const CRI_ENDPOINT_FLAG: DefaultedFlag<string> = {
  name: 'cri-endpoint',
  kind: 'value',
  env: 'CONTAINER_RUNTIME_ENDPOINT',
  placeholder: 'unix:///PATH',
  help: "The container runtime's CRI socket: the re-check asks it for each pod's sandbox, --cni-audit what the runtime loaded (default containerd's {default}; with --runtime crio, CRI-O's unix:///var/run/crio/crio.sock). The default unanswered is a warning of the audit, a socket named here an error.",
  parse: parseCriEndpoint,
  default: 'unix:///run/containerd/containerd.sock',
};

export const NETNS_DIR_FLAG: DefaultedFlag<string> = {
  name: 'netns-dir',
  kind: 'value',
  placeholder: 'DIR',
  help: "Where the runtime mounts pods' network namespaces (default {default}, also as /var/run/netns; containerd with netns_mounts_under_state_dir mounts them under its CRI state directory, /run/containerd/io.containerd.grpc.v1.cri/netns instead). The manifest mounts it into the re-checking agent, which says so of a namespace elsewhere rather than enter it.",
  parse: parseAbsoluteDir,
  default: DEFAULT_NETNS_DIR,
};

export const RECHECK_ACTION_FLAG: DefaultedFlag<RecheckAction> = {
  name: 'recheck-action',
  kind: 'value',
  placeholder: 'report|delete',
  help: 'What to do with a pod whose capture is lost (default {default}): report it, or also delete it so its controller recreates it and the CNI enrols the new one (the same preconditions, backoff and breaker as --action delete).',
  parse: oneOf<RecheckAction>(RECHECK_ACTIONS, { say: 'one of', exact: true }),
  default: 'report',
};

export const REPORT_CONDITION_FLAG: DefaultedFlag<boolean> = {
  name: 'report-condition',
  kind: 'switch',
  env: 'INTERLOCK_REPORT_CONDITION',
  help: "Report the node's readiness for the mesh as the Node condition interlock.dev/MeshCNIReady (True only on a clean --cni-audit; False naming a broken CNI config, a failing mesh plugin, an open breaker or lost captures), written on change at most once per --condition-interval. Needs --cni-audit.",
  parse: parseBoolean,
  default: false,
};

export const STARTUP_TAINT_FLAG: FlagDef<TaintMatch> = {
  name: 'startup-taint',
  kind: 'value',
  placeholder: 'KEY[:EFFECT]',
  help: 'Remove this taint, which the kubelet registered the node with (--register-with-taints), once the node is ready for the mesh: a clean --cni-audit, no mesh plugin failure and no validator failure within the breaker window. Never added back by the agent. Needs --cni-audit.',
  parse: parseTaintMatch,
};

export const CONDITION_INTERVAL_FLAG: DefaultedFlag<number> = {
  name: 'condition-interval',
  kind: 'value',
  placeholder: 'DURATION',
  help: 'With --report-condition or --startup-taint: a changed condition is written at most this often, an unchanged one every 30 intervals as a heartbeat (default {default}).',
  parse: parseDuration(1000, 3_600_000),
  default: 10_000,
  showDefault: formatDuration,
};

/** The flags of `interlock node`, declared once, and for `--cni-audit` cni-check's directory flags: one table, one reader. */
export const NODE_COMMAND_FLAGS: readonly FlagDef[] = [
  NODE_NAME_FLAG,
  MESH_FLAG,
  CONTAINER_NAME_FLAG,
  FAILURE_EXIT_CODE_FLAG,
  ACTION_FLAG,
  TAINT_FLAG,
  BREAKER_THRESHOLD_FLAG,
  BREAKER_MIN_NAMESPACES_FLAG,
  BREAKER_WINDOW_FLAG,
  MAX_RECREATIONS_FLAG,
  RECREATE_WINDOW_FLAG,
  WRITES_PER_SECOND_FLAG,
  LABEL_SELECTOR_FLAG,
  WATCH_NAMESPACE_FLAG,
  TRUSTED_IMAGE_FLAG,
  LISTEN_FLAG,
  LOG_LEVEL_FLAG,
  CNI_AUDIT_FLAG,
  RECHECK_INTERVAL_FLAG,
  CRI_ENDPOINT_FLAG,
  NETNS_DIR_FLAG,
  RECHECK_ACTION_FLAG,
  ISTIO_CNI_VERSION_FLAG,
  REPORT_CONDITION_FLAG,
  STARTUP_TAINT_FLAG,
  CONDITION_INTERVAL_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
  ...CNI_AUDIT_FLAGS,
] as readonly FlagDef[];
