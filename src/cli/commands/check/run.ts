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
import { systemClock, type Clock } from '../../../probe/clock.js';
import { commandError } from '../../command-error.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { checkMode, type CheckMode } from './config.js';
import { CHECK_FLAGS, CHECK_OUTPUT_FLAG, CONTEXT_FLAG, KUBECONFIG_FLAG, WAIT_FLAG } from './flags.js';
import { checkUntilPassed } from './wait.js';

/** What --wait runs on: the clock, the stop (SIGINT, SIGTERM) and where each retry's line goes (stderr, as it happens). */
export interface WaitEdges {
  readonly clock?: Clock;
  /** Asked for only with --wait: a one-shot check keeps the default Ctrl-C. */
  readonly stopSignal?: () => AbortSignal;
  readonly progress?: (line: string) => void;
}

/** `interlock check`: read the installed parts once (or, --pre, what an install needs), check them, say what to fix. */
export async function runCheck(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now: () => Date = () => new Date(),
  edges: WaitEdges = {},
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('check', argv, {}, CHECK_FLAGS);
  if (!parsed.ok) return commandError('check', EXIT.invalidConfig, parsed.error);
  const mode = checkMode(parsed.value);
  if (typeof mode === 'string')
    return commandError('check', EXIT.invalidConfig, { reason: 'ConfigInvalid', message: mode });
  const kubeconfig = flagValue(parsed.value, KUBECONFIG_FLAG) ?? (env.KUBECONFIG || join(homedir(), '.kube', 'config'));
  const access = kubeconfigAccess(kubeconfig, flagValue(parsed.value, CONTEXT_FLAG));
  if (!access.ok) return commandError('check', EXIT.noInput, access.error);
  const once = () => checkOnce(access.value, mode, now());
  const waitMs = flagValue(parsed.value, WAIT_FLAG);
  const { clock = systemClock, stopSignal, progress = (line: string) => process.stderr.write(`${line}\n`) } = edges;
  const { context, results } =
    waitMs === undefined ? await once() : await checkUntilPassed(once, waitMs, clock, progress, stopSignal?.());
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
    const snapshot = await readInstall(get, access, mode.namespaces, now, mode.dataPlane, mode.image);
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
