import {
  oneOf,
  parseBoolean,
  parseDuration,
  parseListenAddress,
  parseTaintMatch,
  showListenAddress,
} from '../config/flag-parsers.js';
import { formatDuration } from '../config/duration.js';
import type { FlagDef } from '../config/flag-def.js';
import { fail, ok, type Result } from '../reason/result.js';
import { HELP_FLAG, VERSION_FLAG } from '../config/command-flags.js';
import { MESH_FLAG } from '../config/interception-flags.js';
import { meshIdentities, meshIdentity, type Mesh } from '../mesh/meshes.js';
import { FAILURE_EXIT_CODE_FLAG, LOG_LEVEL_FLAG } from '../config/validate-config.js';
import { NODE_ACTIONS, type NodeAction } from './decide.js';
import { RECHECK_ACTIONS, type RecheckAction } from './recheck/recheck-action.js';

const text = (value: string): Result<string, 'ConfigInvalid'> =>
  value.trim() ? ok(value.trim()) : fail('ConfigInvalid', 'expected a non-empty value');
const count =
  (min: number, max: number) =>
  (value: string): Result<number, 'ConfigInvalid'> =>
    /^\d+$/.test(value) && Number(value) >= min && Number(value) <= max
      ? ok(Number(value))
      : fail('ConfigInvalid', `expected a whole number from ${min} to ${max}`);
const duration = parseDuration(100, 86_400_000);
const endpoint = (value: string): Result<string, 'ConfigInvalid'> =>
  /^(unix:\/\/)?\/[^\0\s]{1,4000}$/.test(value.trim())
    ? ok(value.trim())
    : fail(
        'ConfigInvalid',
        'expected unix:///PATH (containerd: unix:///run/containerd/containerd.sock; CRI-O: unix:///var/run/crio/crio.sock)',
      );
const names = (value: string): Result<readonly string[], 'ConfigInvalid'> => {
  const list = value.split(',').map((item) => item.trim());
  return list.every((item) => /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,254}$/.test(item))
    ? ok(list)
    : fail('ConfigInvalid', 'expected a comma-separated list of names');
};

/** The flags of `interlock node`, declared once. */
export const NODE_FLAGS = [
  {
    name: 'node-name',
    kind: 'value',
    env: 'NODE_NAME',
    placeholder: 'NAME',
    help: 'This node (the downward API spec.nodeName); only its pods are watched.',
    parse: text,
  },
  MESH_FLAG,
  {
    name: 'container-name',
    kind: 'value',
    placeholder: 'NAME',
    help: `The validator init container (${meshIdentities()
      .map((identity) => identity.containers.validator)
      .join(', ')}).`,
    parse: text,
  },
  FAILURE_EXIT_CODE_FLAG,
  {
    name: 'action',
    kind: 'value',
    placeholder: 'delete|label|none',
    help: 'What to do with a pod the CNI failed: delete it, label it interlock.dev/blocked, or only report.',
    parse: oneOf<NodeAction>(NODE_ACTIONS, { say: 'one of', exact: true }),
    default: 'delete',
  },
  {
    name: 'taint',
    kind: 'switch',
    help: 'While the breaker is open, taint the node interlock.dev/cni-not-ready:NoSchedule.',
    parse: () => ok(true),
    default: false,
  },
  {
    name: 'breaker-threshold',
    kind: 'value',
    placeholder: 'N',
    help: 'Blocked pods of more than N distinct owners within the breaker window open the breaker (default {default}); one owner counts once, however often its pods fail.',
    parse: count(1, 10_000),
    default: 5,
  },
  {
    name: 'breaker-min-namespaces',
    kind: 'value',
    placeholder: 'N',
    help: 'Those owners must span at least N namespaces (default {default}), so one tenant cannot open the breaker alone; 1 when every workload shares one namespace.',
    parse: count(1, 1000),
    default: 2,
  },
  {
    name: 'breaker-window',
    kind: 'value',
    placeholder: 'DURATION',
    help: 'The breaker window, and how long the node must stay healthy to close it (default {default}).',
    parse: duration,
    default: 60_000,
    // Written in seconds, as the breaker's docs speak of it.
    showDefault: (ms: number) => `${ms / 1000}s`,
  },
  {
    name: 'max-recreations',
    kind: 'value',
    placeholder: 'N',
    help: "An owner's pods recreated N times within the recreate window are left alone (default {default}).",
    parse: count(1, 1000),
    default: 3,
  },
  {
    name: 'recreate-window',
    kind: 'value',
    placeholder: 'DURATION',
    help: 'The per-owner recreation window (default {default}).',
    parse: duration,
    default: 600_000,
    showDefault: formatDuration,
  },
  {
    name: 'writes-per-second',
    kind: 'value',
    placeholder: 'N',
    help: 'API writes (deletes, patches, Events) per second, shared (default 5, burst 10).',
    parse: count(1, 1000),
    default: 5,
  },
  {
    name: 'label-selector',
    kind: 'value',
    placeholder: 'SELECTOR',
    help: 'Watch only pods matching this label selector (besides spec.nodeName).',
    parse: text,
  },
  {
    name: 'watch-namespace',
    kind: 'value',
    placeholder: 'NS[,NS]',
    help: 'Look only at pods in these namespaces (default: every namespace).',
    parse: names,
  },
  {
    name: 'trusted-image',
    kind: 'value',
    placeholder: 'REPO[,REPO]',
    help: "Interlock's image repositories (or sha256: digests): only validators the kubelet reports running one of them, as shipped, count toward the breaker (none without it).",
    parse: names,
  },
  {
    name: 'listen',
    kind: 'value',
    env: 'INTERLOCK_LISTEN',
    placeholder: 'HOST:PORT',
    help: '/metrics, /healthz and /readyz (default {default}).',
    parse: parseListenAddress('0.0.0.0:9090'),
    default: { host: '0.0.0.0', port: 9090 },
    showDefault: showListenAddress,
  },
  LOG_LEVEL_FLAG,
  {
    name: 'cni-audit',
    kind: 'switch',
    env: 'INTERLOCK_CNI_AUDIT',
    help: "Audit the node's CNI configuration (as `interlock cni-check`, with its --cni-* flags) on file events and every 30 s: an Event on the Node when the verdict changes, a metric, and a failing audit opens the breaker (and taints with --taint).",
    // Every switch read from the environment takes the same words (INTERLOCK_TPROXY=1 and =yes too).
    parse: parseBoolean,
    default: false,
  },
  {
    name: 'recheck-interval',
    kind: 'value',
    env: 'INTERLOCK_RECHECK_INTERVAL',
    placeholder: 'DURATION',
    help: 'Re-check every running meshed pod of this node this often (`1m`; off by default): its rules, read in its network namespace found through the runtime (--cri-endpoint), checked as its validator checks them. Two sweeps in a row that find the capture lost post a CaptureLost Warning on the pod. Needs the privileged agent (`manifest --node-agent --recheck-interval`, docs/node-agent.md).',
    parse: parseDuration(1000, 86_400_000),
  },
  {
    name: 'cri-endpoint',
    kind: 'value',
    env: 'CONTAINER_RUNTIME_ENDPOINT',
    placeholder: 'unix:///PATH',
    help: "The container runtime's CRI socket the re-check asks for each pod's sandbox (default containerd's {default}; CRI-O: unix:///var/run/crio/crio.sock).",
    parse: endpoint,
    default: 'unix:///run/containerd/containerd.sock',
  },
  {
    name: 'recheck-action',
    kind: 'value',
    placeholder: 'report|delete',
    help: 'What to do with a pod whose capture is lost (default {default}): report it, or also delete it so its controller recreates it and the CNI enrols the new one (the same preconditions, backoff and breaker as --action delete).',
    parse: oneOf<RecheckAction>(RECHECK_ACTIONS, { say: 'one of', exact: true }),
    default: 'report',
  },
  {
    name: 'report-condition',
    kind: 'switch',
    env: 'INTERLOCK_REPORT_CONDITION',
    help: "Report the node's readiness for the mesh as the Node condition interlock.dev/MeshCNIReady (True only on a clean --cni-audit; False naming a broken CNI config, a failing mesh plugin, an open breaker or lost captures), written on change at most once per --condition-interval. Needs --cni-audit.",
    parse: parseBoolean,
    default: false,
  },
  {
    name: 'startup-taint',
    kind: 'value',
    placeholder: 'KEY[:EFFECT]',
    help: 'Remove this taint, which the kubelet registered the node with (--register-with-taints), once the node is ready for the mesh: a clean --cni-audit, no mesh plugin failure and no validator failure within the breaker window. Never added back by the agent. Needs --cni-audit.',
    parse: parseTaintMatch,
  },
  {
    name: 'condition-interval',
    kind: 'value',
    placeholder: 'DURATION',
    help: 'With --report-condition or --startup-taint: a changed condition is written at most this often, an unchanged one every 30 intervals as a heartbeat (default {default}).',
    parse: parseDuration(1000, 3_600_000),
    default: 10_000,
    showDefault: formatDuration,
  },
  HELP_FLAG,
  VERSION_FLAG,
] as const satisfies readonly FlagDef[];

/** The preset validator container and failure code of a mesh. */
export function meshDefaults(mesh: Mesh): { container: string; failureExitCode: number } {
  const identity = meshIdentity(mesh);
  return { container: identity.containers.validator, failureExitCode: identity.failureExitCode };
}
