import { EXIT } from '../../../config/exit-codes.js';
import { echoValue } from '../../../config/echo-value.js';
import { PRESETS, type Mesh } from '../../../config/interception.js';
import { flagSource, flagValue } from '../../../config/parsed-flags.js';
import { meshNamesText } from '../../../mesh/meshes.js';
import { fail, ok, type Result } from '../../../reason/result.js';
import type { RuntimeName } from '../../../cni/runtime-load.js';
import { commandError } from '../../command-error.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { MESH_FLAG } from '../../../config/interception-flags.js';
import { FORMAT_FLAG } from '../../../config/explain-flags.js';
import {
  CNI_BIN_DIR_FLAG,
  CNI_CHECK_FLAGS,
  CNI_CONF_DIR_FLAG,
  CRIO_DEFAULT_NETWORK_FLAG,
  MAX_CONF_NUM_FLAG,
  MESH_PLUGIN_FLAG,
  RUNTIME_FLAG,
  VERSION_TIMEOUT_FLAG,
} from './flags.js';

export interface CniCheckConfig {
  readonly mesh: Mesh;
  readonly confDir: string;
  readonly binDirs: readonly string[];
  readonly runtime: RuntimeName;
  readonly meshPlugin: string;
  readonly versionTimeoutMs: number;
  readonly maxConfNum: number;
  readonly crioDefaultNetwork?: string;
  readonly format: 'text' | 'json';
}

/** The command line through the one shared reader, then the cross-flag rules of cni-check. */
function parseCniCheckFlags(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<CniCheckConfig, 'ConfigInvalid'> {
  const parsed = parseCommandLine('cni-check', argv, env, CNI_CHECK_FLAGS);
  if (!parsed.ok) return parsed;
  const read = parsed.value;
  const mesh = flagSource(read, MESH_FLAG) === undefined ? undefined : flagValue(read, MESH_FLAG);
  if (mesh === undefined) return fail('ConfigInvalid', `--mesh is required (${meshNamesText()})`);
  const meshPlugin = flagValue(read, MESH_PLUGIN_FLAG) ?? PRESETS[mesh].cniPlugin;
  if (meshPlugin === undefined)
    return fail(
      'ConfigInvalid',
      '--mesh generic needs --mesh-plugin TYPE: the type of the mesh CNI plugin to look for',
    );
  const crioDefaultNetwork = flagValue(read, CRIO_DEFAULT_NETWORK_FLAG);
  return ok({
    mesh,
    meshPlugin,
    confDir: flagValue(read, CNI_CONF_DIR_FLAG),
    binDirs: flagValue(read, CNI_BIN_DIR_FLAG),
    runtime: flagValue(read, RUNTIME_FLAG),
    versionTimeoutMs: flagValue(read, VERSION_TIMEOUT_FLAG),
    maxConfNum: flagValue(read, MAX_CONF_NUM_FLAG),
    ...(crioDefaultNetwork === undefined ? {} : { crioDefaultNetwork }),
    format: flagValue(read, FORMAT_FLAG),
  });
}

/** `interlock cni-check`: never exits and never throws; the composition root prints and exits. */
export async function runCniCheck(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  stop?: AbortSignal,
): Promise<CommandOutcome> {
  try {
    const config = parseCniCheckFlags(argv, env);
    if (!config.ok) return commandError('cni-check', EXIT.invalidConfig, config.error);
    const outcome = await check(config.value, stop);
    return stop?.aborted ? interrupted(stop) : outcome;
  } catch (error) {
    return commandError('cni-check', EXIT.internalError, {
      reason: 'InternalError',
      message: echoValue(error instanceof Error ? error.message : String(error)),
    });
  }
}

/** SIGTERM or SIGINT before the verdict: the plugins under way were killed, and no verdict is claimed. */
function interrupted(stop: AbortSignal): CommandOutcome {
  const name = stop.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
  return commandError('cni-check', name === 'SIGINT' ? EXIT.sigint : EXIT.sigterm, {
    reason: 'Interrupted',
    message: `${name} ended the CNI audit before a verdict; the plugin processes it had started were killed`,
  });
}

async function check(config: CniCheckConfig, signal: AbortSignal | undefined): Promise<CommandOutcome> {
  const { runCniAudit } = await import('../../../cni/run-cni-audit.js');
  const { verdictJson, verdictText } = await import('../../../cni/verdict-report.js');
  const verdict = await runCniAudit({
    confDir: config.confDir,
    binDirs: config.binDirs,
    runtime: config.runtime,
    meshPlugin: config.meshPlugin,
    versionTimeoutMs: config.versionTimeoutMs,
    maxConfNum: config.maxConfNum,
    ...(config.crioDefaultNetwork === undefined ? {} : { crioDefaultNetwork: config.crioDefaultNetwork }),
    ...(signal ? { signal } : {}),
  });
  if (!verdict.ok)
    return commandError(
      'cni-check',
      verdict.error.reason === 'CniConfigTooLarge' ? EXIT.dataError : EXIT.noInput,
      verdict.error,
    );
  const exitCode = verdict.value.healthy ? EXIT.pass : PRESETS[config.mesh].failureExitCode;
  return {
    exitCode,
    stdout: config.format === 'json' ? verdictJson(verdict.value, exitCode) : verdictText(verdict.value),
    stderr: '',
  };
}
