import { homedir } from 'node:os';
import { join } from 'node:path';
import { EXIT } from '../../../config/exit-codes.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagValue } from '../../../config/parsed-flags.js';
import type { ClusterAccess } from '../../../kube/cluster-access.js';
import { kubeconfigAccess } from '../../../kube/kubeconfig.js';
import { renderChecks } from '../../../install-check/report.js';
import { judgeInstall, judgePreflight } from '../../../install-check/judge-install.js';
import { getter, readInstall } from '../../../install-check/install-snapshot.js';
import type { InstallCheckResult } from '../../../install-check/install-check-result.js';
import { readPreflight } from '../../../install-check/preflight-snapshot.js';
import { commandError } from '../../command-error.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { checkMode, type CheckMode } from './config.js';
import { CHECK_FLAGS, CHECK_OUTPUT_FLAG, CONTEXT_FLAG, KUBECONFIG_FLAG } from './flags.js';

/** `interlock check`: read the installed parts once (or, --pre, what an install needs), check them, say what to fix. */
export async function runCheck(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now: () => Date = () => new Date(),
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('check', argv, {}, CHECK_FLAGS);
  if (!parsed.ok) return commandError('check', EXIT.invalidConfig, parsed.error);
  const mode = checkMode(parsed.value);
  if (typeof mode === 'string')
    return commandError('check', EXIT.invalidConfig, { reason: 'ConfigInvalid', message: mode });
  const kubeconfig = flagValue(parsed.value, KUBECONFIG_FLAG) ?? (env.KUBECONFIG || join(homedir(), '.kube', 'config'));
  const access = kubeconfigAccess(kubeconfig, flagValue(parsed.value, CONTEXT_FLAG));
  if (!access.ok) return commandError('check', EXIT.noInput, access.error);
  const { context, results } = await checkOnce(access.value, mode, now());
  const failed = results.some((result) => result.status === 'fail');
  return {
    exitCode: failed ? EXIT.checkFailed : EXIT.pass,
    stdout: renderChecks(context, results, flagValue(parsed.value, CHECK_OUTPUT_FLAG)),
    stderr: '',
  };
}

async function checkOnce(access: ClusterAccess, mode: CheckMode, now: Date) {
  const get = getter(access);
  if (mode.kind === 'install') {
    const snapshot = await readInstall(get, access, mode.namespaces, now, mode.dataPlane);
    return { context: snapshot, results: judgeInstall(snapshot) };
  }
  const context = {
    server: access.server,
    origin: access.origin,
    webhookNamespace: mode.plan.webhookNamespace,
    nodeNamespace: mode.plan.nodeNamespace,
  };
  const version = await get('/version');
  const results: InstallCheckResult[] = judgePreflight(
    { ...context, version },
    version.state === 'found' ? await readPreflight(get, mode.plan) : undefined,
  );
  return { context, results };
}
