import { formatDuration } from '../config/duration.js';
import { isConfigError } from '../config/config-error.js';
import { readRawOptions } from '../config/raw-options.js';
import { EXIT } from '../config/exit-codes.js';
import { buildValidateConfig, VALIDATE_FLAGS, type ValidateConfig } from '../config/validate-config.js';
import { readPodNetwork, type LoadRtNetlink } from '../netlink/read-pod-network.js';
import { createLogger, type Logger } from '../output/logger.js';
import { writeTerminationLog } from '../output/termination-log.js';
import type { Verdict } from '../verdict/decide-verdict.js';
import { formatTerminationMessage } from '../verdict/termination-message.js';
import { runValidate } from '../validate/run-validate.js';
import type { InspectRules } from '../validate/rules-port.js';
import type { CommandResult } from './command-result.js';
import { formatHelp, VALIDATE_SUMMARY } from './help.js';
import { VERSION } from './version.js';
import { REPORT_EVENT_FLAG, reportEventRequested } from '../kube/report-event-flag.js';

export type { CommandResult };

const SIGNAL_EXIT: Readonly<Record<string, number>> = { SIGTERM: EXIT.sigterm, SIGINT: EXIT.sigint };

/** `interlock validate`: builds the configuration, runs, reports; returns the exit code to the root. */
export async function runValidateCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
  inspectRules: InspectRules,
  loadRtNetlink?: LoadRtNetlink,
): Promise<CommandResult> {
  const raw = readRawOptions(argv, env, [...VALIDATE_FLAGS, REPORT_EVENT_FLAG]);
  if (raw.ok && raw.options.has('help')) return { exitCode: 0, stdout: formatHelp('validate', VALIDATE_SUMMARY, [...VALIDATE_FLAGS, REPORT_EVENT_FLAG]), stderr: '' };
  if (raw.ok && raw.options.has('version')) return { exitCode: 0, stdout: `${VERSION}\n`, stderr: '' };
  const reportEvent = raw.ok ? reportEventRequested(raw.options) : false;
  const config = raw.ok ? (raw.positionals.length > 0 ? undefined : isConfigError(reportEvent) ? reportEvent : buildValidateConfig(raw.options)) : raw.error;
  if (config === undefined || isConfigError(config)) {
    const message = config === undefined ? `unexpected argument ${JSON.stringify(raw.ok ? raw.positionals[0] : '')}` : config.message;
    // Invalid configuration still leaves a termination message: the pod's describe output is where operators look.
    const terminationLog = (raw.ok ? raw.options.get('termination-log')?.value : undefined) ?? '/dev/termination-log';
    writeTerminationLog(terminationLog, `ConfigInvalid: ${message}\n`);
    // A misconfigured validator blocks the pod as surely as a failed probe; its owner hears of it the same way.
    if (reportEvent === true) await (await import('../kube/report-failure-event.js')).reportFailureEvent({ env, reason: 'ConfigInvalid', terminationMessage: `ConfigInvalid: ${message}`, log: createLogger('json', 'info', 2) });
    return { exitCode: EXIT.invalidConfig, stdout: '', stderr: `interlock validate: ConfigInvalid: ${message}\n` };
  }

  const logger = createLogger(config.logFormat, config.logLevel);
  const started = Date.now();
  logger.info({ version: VERSION, config: describeConfig(config), uid: process.getuid?.(), gid: process.getgid?.() }, 'interlock validate starting');
  let verdict: Verdict;
  try {
    verdict = await runValidate(config, {
      readPodNetwork: () => readPodNetwork(loadRtNetlink),
      inspectRules,
      identity: { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, groups: process.getgroups?.() ?? [] },
      logger,
      signal,
    });
  } catch (error) {
    verdict = {
      outcome: 'internal',
      reason: 'InternalError',
      message: `the validator failed unexpectedly: ${(error as Error).message ?? String(error)}`,
      evidence: [String((error as Error).stack ?? '').split('\n').slice(0, 4).join(' | ')],
      checks: [],
    };
  }
  const result = finish(config, verdict, logger, started, signal);
  // Failure only, and loaded only then: the pass path never loads Kubernetes client code.
  if (reportEvent === true && verdict.outcome !== 'pass' && verdict.outcome !== 'interrupted') {
    await (await import('../kube/report-failure-event.js')).reportFailureEvent({ env, reason: verdict.reason, terminationMessage: formatTerminationMessage(verdict, []), log: logger });
  }
  return result;
}

function finish(config: ValidateConfig, verdict: Verdict, logger: Logger, started: number, signal: AbortSignal): CommandResult {
  const exitCode = exitCodeOf(verdict, config, signal);
  const message = formatTerminationMessage(verdict, [`config: ${describeConfig(config)}`]);
  const written = writeTerminationLog(config.terminationLog, message);
  if (!written.ok) logger.warn({ path: config.terminationLog, code: written.code }, 'termination log not written; the exit code still carries the verdict');
  const summary = {
    verdict: verdict.outcome,
    reason: verdict.reason,
    exitCode,
    durationMs: Date.now() - started,
    checks: verdict.checks.map((check) => ({ name: check.name, status: check.status, ...(check.reason ? { reason: check.reason } : {}), message: check.message })),
  };
  if (verdict.outcome === 'pass') logger.info(summary, `validation passed: ${verdict.message}`);
  else logger.error(summary, `validation failed: ${verdict.reason}: ${verdict.message}`);
  return { exitCode, stdout: '', stderr: '' };
}

function exitCodeOf(verdict: Verdict, config: ValidateConfig, signal: AbortSignal): number {
  switch (verdict.outcome) {
    case 'pass': return EXIT.pass;
    case 'fail': return config.failureExitCode;
    case 'config': return EXIT.invalidConfig;
    case 'internal': return EXIT.internalError;
    case 'interrupted': return SIGNAL_EXIT[String(signal.reason)] ?? EXIT.sigterm;
  }
}

function describeConfig(config: ValidateConfig): string {
  const spec = config.interception;
  return [
    `mesh=${spec.mesh}`,
    `inbound-port=${spec.inboundPort}`,
    `outbound-port=${spec.outboundPort}`,
    `proxy-uid=${spec.proxyUids.join(',') || '-'}`,
    `proxy-gid=${spec.proxyGids.join(',') || '-'}`,
    `family=${config.family}`,
    `timeout=${formatDuration(config.timeoutMs)}`,
    `rules=${config.rules}`,
  ].join(' ');
}
