import { readCapabilities } from '../../../rules/read/capabilities.js';
import { formatDuration } from '../../../config/duration.js';
import { specSummary, VALIDATE_SPEC_FIELDS } from '../../../config/spec-summary.js';
import { EXIT } from '../../../config/exit-codes.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagSource, flagValue } from '../../../config/parsed-flags.js';
import {
  REPORT_EVENT_FLAG,
  TERMINATION_LOG_FLAG,
  VALIDATE_FLAGS,
  type ValidateConfig,
} from '../../../config/validate-config.js';
import { readPodNetwork, type LoadRtNetlink } from '../../../netlink/read-pod-network.js';
import { createLogger, type Logger } from '../../../output/logger.js';
import { writeTerminationLog } from '../../../output/termination-log.js';
import { isCertifiedPass, type Verdict } from '../../../verdict/decide-verdict.js';
import { formatTerminationMessage } from '../../../verdict/termination-message.js';
import { Progress } from '../../../validate/progress.js';
import { runValidate, type ProveInterception } from '../../../validate/run-validate.js';
import type { InspectRules } from '../../../validate/rules-port.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { validateConfigWithPodMetadata } from './pod-metadata-files.js';
import { commandError } from '../../command-error.js';
import { terminationLogForRefusal } from './refusal-termination-log.js';
import { VerdictWatchdog, verdictDeadline } from './verdict-watchdog.js';
import { VERSION } from '../../version.js';

type Env = Readonly<Record<string, string | undefined>>;
/** `interlock validate`: builds the configuration, runs, reports; returns the exit code to the root. */
export async function runValidateCommand(
  argv: readonly string[],
  env: Env,
  signal: AbortSignal,
  adapters: ValidateAdapters,
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('validate', argv, env, VALIDATE_FLAGS);
  const config = parsed.ok ? validateConfigWithPodMetadata(parsed.value) : parsed;
  if (!config.ok) {
    // Invalid configuration still leaves a termination message: the pod's describe output is where operators look.
    const terminationLog = terminationLogForRefusal(argv, env);
    writeTerminationLog(
      terminationLog.path,
      formatTerminationMessage(
        { outcome: 'config', reason: 'ConfigInvalid', message: config.error.message, evidence: [], checks: [] },
        [],
      ),
      terminationLog.explicit,
    );
    // A misconfigured validator blocks the pod as surely as a failed probe; its owner hears of it the same way.
    if (parsed.ok && flagValue(parsed.value, REPORT_EVENT_FLAG) === true)
      await reportEvent(
        env,
        'ConfigInvalid',
        `ConfigInvalid: ${config.error.message}`,
        createLogger('json', 'info', 2),
      );
    return commandError('validate', EXIT.invalidConfig, config.error);
  }
  const logger = createLogger(config.value.logFormat, config.value.logLevel);
  // Only a path the operator named is created; /dev/termination-log is the kubelet's to make.
  const createLog = parsed.ok && flagSource(parsed.value, TERMINATION_LOG_FLAG) !== undefined;
  const watchdog = armWatchdog(config.value, logger, signal, createLog);
  const started = performance.now();
  logger.info(
    { version: VERSION, config: describeConfig(config.value), uid: process.getuid?.(), gid: process.getgid?.() },
    'interlock validate starting',
  );
  const verdict = await verdictOf(config.value, logger, signal, adapters, watchdog.progress);
  const outcome = finish(config.value, verdict, { logger, started, createLog });
  // The failure Event's own bound (src/kube/report-failure-event.ts) plus a margin.
  watchdog.dog.settle(outcome.exitCode, config.value.reportEvent ? 1500 : 0);
  watchdog.progress.enter('report');
  // Failure only, and loaded only then: the pass path never loads Kubernetes client code.
  if (config.value.reportEvent && verdict.outcome !== 'pass' && verdict.outcome !== 'interrupted') {
    await reportEvent(env, verdict.reason, formatTerminationMessage(verdict, []), logger);
  }
  return outcome;
}

async function reportEvent(env: Env, reason: string, terminationMessage: string, log: Logger): Promise<void> {
  const { reportFailureEvent } = await import('../../../kube/report-failure-event.js');
  await reportFailureEvent({ env, reason, terminationMessage, log });
}

/** What a launcher or a test may substitute; the rest of validate is the real thing. */
export interface ValidateAdapters {
  readonly inspectRules: InspectRules;
  readonly loadRtNetlink?: LoadRtNetlink;
  readonly proveInterception?: ProveInterception;
}

/**
 * Armed before any phase, timed from the process's start (performance.now() counts from it), so
 * time a starved node spent starting the process counts against the timeout too. A signal ends
 * the run through it at once, with the termination message written.
 */
function armWatchdog(
  config: ValidateConfig,
  logger: Logger,
  signal: AbortSignal,
  createLog: boolean,
): { dog: VerdictWatchdog; progress: Progress } {
  const progress = new Progress();
  const dog = new VerdictWatchdog({
    timeoutMs: config.timeoutMs,
    failureExitCode: config.failureExitCode,
    terminationLog: config.terminationLog,
    createLog,
    context: [`config: ${describeConfig(config)}`],
    progress,
    logger,
  });
  dog.arm();
  const interrupt = (): void => dog.interrupt(String(signal.reason ?? 'a signal'));
  if (signal.aborted) interrupt();
  else signal.addEventListener('abort', interrupt, { once: true });
  return { dog, progress };
}

async function verdictOf(
  config: ValidateConfig,
  logger: Logger,
  signal: AbortSignal,
  adapters: ValidateAdapters,
  progress: Progress,
): Promise<Verdict> {
  try {
    return await runValidate(config, {
      readPodNetwork: () => readPodNetwork(adapters.loadRtNetlink),
      inspectRules: adapters.inspectRules,
      identity: {
        uid: process.getuid?.() ?? 0,
        gid: process.getgid?.() ?? 0,
        groups: process.getgroups?.() ?? [],
        canSwitch: readCapabilities()?.setIds === true,
      },
      logger,
      signal,
      deadline: verdictDeadline(config.timeoutMs),
      progress,
      ...(adapters.proveInterception ? { proveInterception: adapters.proveInterception } : {}),
    });
  } catch (error) {
    // A bug: the message only; a raw stack in a termination message helps nobody reading `kubectl describe`.
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return {
      outcome: 'internal',
      reason: 'InternalError',
      message: `the validator failed unexpectedly: ${message.slice(0, 300)}`,
      evidence: [],
      checks: [],
    };
  }
}

interface RunContext {
  readonly logger: Logger;
  readonly started: number;
  readonly createLog: boolean;
}

function finish(config: ValidateConfig, verdict: Verdict, { logger, started, createLog }: RunContext): CommandOutcome {
  const exitCode = exitCodeOf(verdict, config);
  const message = formatTerminationMessage(verdict, [`config: ${describeConfig(config)}`]);
  const written = writeTerminationLog(config.terminationLog, message, createLog);
  if (!written.ok)
    logger.warn(
      { path: config.terminationLog, code: written.error },
      'termination log not written; the exit code still carries the verdict',
    );
  const summary = {
    verdict: verdict.outcome,
    reason: verdict.reason,
    exitCode,
    durationMs: Math.round(performance.now() - started),
    checks: verdict.checks.map((check) => ({
      name: check.name,
      status: check.status,
      ...(check.reason ? { reason: check.reason } : {}),
      message: check.message,
    })),
  };
  if (verdict.outcome === 'pass') logger.info(summary, `validation passed: ${verdict.message}`);
  else logger.error(summary, `validation failed: ${verdict.reason}: ${verdict.message}`);
  return { exitCode, stdout: '', stderr: '' };
}

function exitCodeOf(verdict: Verdict, config: ValidateConfig): number {
  switch (verdict.outcome) {
    // Exit 0 only for a verdict the one deciding function certified from proofs.
    case 'pass':
      return isCertifiedPass(verdict) ? EXIT.pass : EXIT.internalError;
    case 'fail':
      return config.failureExitCode;
    case 'config':
      return EXIT.invalidConfig;
    case 'internal':
      return EXIT.internalError;
    case 'interrupted':
      // Like Linkerd's validator: a signal before a verdict is a failure, never a pass.
      return config.failureExitCode;
  }
}

function describeConfig(config: ValidateConfig): string {
  return [
    specSummary(config.interception, VALIDATE_SPEC_FIELDS),
    `family=${config.family}`,
    `timeout=${formatDuration(config.timeoutMs)}`,
    `rules=${config.rules}`,
  ].join(' ');
}
