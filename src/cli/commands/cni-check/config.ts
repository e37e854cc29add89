import type { FollowRuntime } from '../../../cni/observe-runtime.js';
import type { RuntimeName } from '../../../cni/runtime-load.js';
import { socketPathOf } from '../../../node-agent/cri/socket-path.js';
import { defaultSockets } from '../../../cni/runtime-sockets.js';
import type { RuntimeQuestion } from '../../../cni/observe-runtime.js';
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
  HOST_ROOT_FLAG,
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
  /** Unless --cri-endpoint none: the sockets to ask, and what the operator left to the answer. */
  readonly cri?: CniCheckCri;
}

export interface CniCheckCri {
  readonly sockets: readonly string[];
  readonly asked: RuntimeQuestion['asked'];
  readonly hostRoot: string;
  readonly follow: FollowRuntime;
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

/**
 * --cri-endpoint: `auto` tries the runtimes' default sockets under --host-root (only --runtime's
 * when given), a named socket is asked alone, `none` asks nothing. The settings not given on the
 * command line follow the answer.
 */
function criOf(read: ParsedFlags): Result<CniCheckConfig['cri'], 'ConfigInvalid'> {
  const endpoint = flagValue(read, CNI_CRI_ENDPOINT_FLAG);
  if (endpoint === 'none') return ok(undefined);
  const hostRoot = flagValue(read, HOST_ROOT_FLAG);
  const runtime = givenValue(read, RUNTIME_FLAG);
  const follow: FollowRuntime = {
    confDir: givenValue(read, CNI_CONF_DIR_FLAG) === undefined,
    binDirs: givenValue(read, CNI_BIN_DIR_FLAG) === undefined,
    maxConfNum: givenValue(read, MAX_CONF_NUM_FLAG) === undefined,
    runtime: runtime === undefined,
  };
  if (endpoint === 'auto')
    return ok({ sockets: defaultSockets(runtime, hostRoot), asked: 'default', hostRoot, follow });
  const socket = socketPathOf(endpoint);
  if (!socket.ok) return fail('ConfigInvalid', `--cri-endpoint: ${socket.error.message}`);
  return ok({ sockets: [socket.value], asked: 'named', hostRoot, follow });
}
