import { homedir } from 'node:os';
import { join } from 'node:path';
import { EXIT } from '../../../config/exit-codes.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagValue } from '../../../config/parsed-flags.js';
import { kubeconfigAccess } from '../../../kube/kubeconfig.js';
import { renderChecks } from '../../../install-check/report.js';
import { judgeInstall } from '../../../install-check/judge-install.js';
import { getter, readInstall } from '../../../install-check/install-snapshot.js';
import { commandError } from '../../command-error.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from '../../flags/part-namespace-flags.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { CHECK_FLAGS, CHECK_OUTPUT_FLAG, DATA_PLANE_FLAG, CONTEXT_FLAG, KUBECONFIG_FLAG } from './flags.js';

/** `interlock check`: read the installed parts once, check them, say what to fix. */
export async function runCheck(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now: () => Date = () => new Date(),
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('check', argv, {}, CHECK_FLAGS);
  if (!parsed.ok) return commandError('check', EXIT.invalidConfig, parsed.error);
  const kubeconfig = flagValue(parsed.value, KUBECONFIG_FLAG) ?? (env.KUBECONFIG || join(homedir(), '.kube', 'config'));
  const access = kubeconfigAccess(kubeconfig, flagValue(parsed.value, CONTEXT_FLAG));
  if (!access.ok) return commandError('check', EXIT.noInput, access.error);
  const webhook = flagValue(parsed.value, WEBHOOK_NAMESPACE_FLAG);
  const node = flagValue(parsed.value, NODE_NAMESPACE_FLAG);
  const namespaces = { ...(webhook === undefined ? {} : { webhook }), ...(node === undefined ? {} : { node }) };
  const snapshot = await readInstall(
    getter(access.value),
    access.value,
    namespaces,
    now(),
    flagValue(parsed.value, DATA_PLANE_FLAG),
  );
  const results = judgeInstall(snapshot);
  const failed = results.some((result) => result.status === 'fail');
  return {
    exitCode: failed ? EXIT.checkFailed : EXIT.pass,
    stdout: renderChecks(snapshot, results, flagValue(parsed.value, CHECK_OUTPUT_FLAG)),
    stderr: '',
  };
}
