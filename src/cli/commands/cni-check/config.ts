import type { FollowRuntime } from '../../../cni/observe-runtime.js';
import type { RuntimeName } from '../../../cni/runtime-load.js';
import { socketPathOf } from '../../../node-agent/cri/socket-path.js';
import { FORMAT_FLAG } from '../../../config/explain-flags.js';
import { PRESETS, type Mesh } from '../../../config/interception.js';
import { MESH_FLAG } from '../../../config/interception-flags.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagValue, givenValue, type ParsedFlags } from '../../../config/parsed-flags.js';
import { meshNamesText } from '../../../mesh/meshes.js';
import { fail, ok, type Result } from '../../../reason/result.js';
import {
  CNI_BIN_DIR_FLAG,
  CNI_CHECK_FLAGS,
  CNI_CONF_DIR_FLAG,
  CNI_CRI_ENDPOINT_FLAG,
  CNI_MULTUS_CONF_DIR_FLAG,
  CRIO_DEFAULT_NETWORK_FLAG,
  MAX_CONF_NUM_FLAG,
  MESH_PLUGIN_FLAG,
  RUNTIME_FLAG,
  VERSION_TIMEOUT_FLAG,
} from './flags.js';

export interface CniCheckConfig {
  readonly mesh: Mesh;
  readonly confDir: string;
  readonly multusConfDir: string;
  readonly binDirs: readonly string[];
  readonly runtime: RuntimeName;
  readonly meshPlugin: string;
  readonly versionTimeoutMs: number;
  readonly maxConfNum: number;
  readonly crioDefaultNetwork?: string;
  readonly format: 'text' | 'json';
  /** With --cri-endpoint: containerd's socket, and what the operator left to its answer. */
  readonly cri?: { readonly socketPath: string; readonly follow: FollowRuntime };
}

/** The command line through the one shared reader, then the cross-flag rules of cni-check. */
export function parseCniCheckFlags(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<CniCheckConfig, 'ConfigInvalid'> {
  const parsed = parseCommandLine('cni-check', argv, env, CNI_CHECK_FLAGS);
  if (!parsed.ok) return parsed;
  const read = parsed.value;
  const mesh = givenValue(read, MESH_FLAG);
  if (mesh === undefined) return fail('ConfigInvalid', `--mesh is required (${meshNamesText()})`);
  const meshPlugin = flagValue(read, MESH_PLUGIN_FLAG) ?? PRESETS[mesh].cniPlugin;
  if (meshPlugin === undefined)
    return fail(
      'ConfigInvalid',
      '--mesh generic needs --mesh-plugin TYPE: the type of the mesh CNI plugin to look for',
    );
  const crioDefaultNetwork = flagValue(read, CRIO_DEFAULT_NETWORK_FLAG);
  const cri = criOf(read);
  if (!cri.ok) return cri;
  return ok({
    mesh,
    meshPlugin,
    confDir: flagValue(read, CNI_CONF_DIR_FLAG),
    multusConfDir: flagValue(read, CNI_MULTUS_CONF_DIR_FLAG),
    binDirs: flagValue(read, CNI_BIN_DIR_FLAG),
    runtime: flagValue(read, RUNTIME_FLAG),
    versionTimeoutMs: flagValue(read, VERSION_TIMEOUT_FLAG),
    maxConfNum: flagValue(read, MAX_CONF_NUM_FLAG),
    ...(crioDefaultNetwork === undefined ? {} : { crioDefaultNetwork }),
    format: flagValue(read, FORMAT_FLAG),
    ...(cri.value ? { cri: cri.value } : {}),
  });
}

/** --cri-endpoint: containerd's socket; the settings not given on the command line follow its answer. */
function criOf(read: ParsedFlags): Result<CniCheckConfig['cri'], 'ConfigInvalid'> {
  const endpoint = flagValue(read, CNI_CRI_ENDPOINT_FLAG);
  if (endpoint === undefined) return ok(undefined);
  if (flagValue(read, RUNTIME_FLAG) !== 'containerd')
    return fail(
      'ConfigInvalid',
      "--cri-endpoint compares with containerd's loaded CNI configuration (its verbose Status); it takes --runtime containerd",
    );
  const socket = socketPathOf(endpoint);
  if (!socket.ok) return fail('ConfigInvalid', `--cri-endpoint: ${socket.error.message}`);
  return ok({
    socketPath: socket.value,
    follow: {
      confDir: givenValue(read, CNI_CONF_DIR_FLAG) === undefined,
      binDirs: givenValue(read, CNI_BIN_DIR_FLAG) === undefined,
      maxConfNum: givenValue(read, MAX_CONF_NUM_FLAG) === undefined,
    },
  });
}
