import { stat } from 'node:fs/promises';
import { fail } from '../../../reason/result.js';
import { EXIT } from '../../../config/exit-codes.js';
import { echoValue } from '../../../config/echo-value.js';
import { PRESETS } from '../../../config/interception.js';
import { commandError } from '../../command-error.js';
import type { CommandOutcome } from '../../command-outcome.js';
import type { RuntimeAsker } from '../../../cni/observe-runtime.js';
import { parseCniCheckFlags, type CniCheckConfig } from './config.js';

/** The kubelet's default deadline for a CRI call is 2 min; a Status answer is immediate on a sane node. */
const CRI_STATUS_TIMEOUT_MS = 5000;

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
    multusConfDir: config.multusConfDir,
    binDirs: config.binDirs,
    runtime: config.runtime,
    meshPlugin: config.meshPlugin,
    versionTimeoutMs: config.versionTimeoutMs,
    maxConfNum: config.maxConfNum,
    ...(config.crioDefaultNetwork === undefined ? {} : { crioDefaultNetwork: config.crioDefaultNetwork }),
    ...(signal ? { signal } : {}),
    ...(config.cri
      ? {
          runtimeQuestion: {
            sockets: config.cri.sockets,
            asked: config.cri.asked,
            hostRoot: config.cri.hostRoot,
            ask: askRuntime,
          },
          followRuntime: config.cri.follow,
        }
      : {}),
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

/**
 * A runtime's verbose Status over its CRI socket: one call, one connection, closed after. A path
 * that is no socket is said as such, not as the connection's error.
 */
const askRuntime: RuntimeAsker = async (socketPath) => {
  const kind = await stat(socketPath).then(
    (stats) => (stats.isSocket() ? 'socket' : 'not a socket'),
    () => 'no socket there',
  );
  if (kind !== 'socket') return fail('RuntimeUnreachable', kind);
  const { criClient } = await import('../../../node-agent/cri/cri-client.js');
  const client = criClient(socketPath);
  try {
    return await client.statusInfo(CRI_STATUS_TIMEOUT_MS);
  } finally {
    client.close();
  }
};
