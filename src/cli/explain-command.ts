import type { Family } from '../addr/ip.js';
import { buildInterceptionSpec } from '../config/build-interception.js';
import { HELP_FLAG, VERSION_FLAG } from '../config/command-flags.js';
import { echoValue } from '../config/echo-value.js';
import { EXIT } from '../config/exit-codes.js';
import { EXPLAIN_FLAGS, FORMAT_FLAG } from '../config/explain-flags.js';
import { PRESETS } from '../config/interception.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import { flagValue } from '../config/parsed-flags.js';
import { FAILURE_EXIT_CODE_FLAG, FAMILY_FLAG, type FamilyMode } from '../config/validate-config.js';
import { analyzeDumps } from '../rules-check/analyze.js';
import { reportOf, reportText, specSummary } from '../rules-check/report.js';
import type { CommandOutcome } from './command-outcome.js';
import { readDumps } from './explain-dumps.js';
import { EXPLAIN_SUMMARY, formatHelp } from './help.js';
import { VERSION } from './version.js';

type Env = Readonly<Record<string, string | undefined>>;

export const EXPLAIN_HELP = formatHelp('explain', EXPLAIN_SUMMARY, EXPLAIN_FLAGS);

const FAMILIES: Readonly<Record<FamilyMode, readonly Family[] | 'auto'>> = {
  auto: 'auto',
  ipv4: ['ipv4'],
  ipv6: ['ipv6'],
  dual: ['ipv4', 'ipv6'],
};

/**
 * `interlock explain`: never exits the process and never throws; the caller prints and exits. The
 * work is synchronous; the Promise is the shape every command of run-cli.ts returns.
 */
export function runExplain(argv: readonly string[], env: Env): Promise<CommandOutcome> {
  try {
    return Promise.resolve(explain(argv, env));
  } catch (error) {
    return Promise.resolve({
      exitCode: EXIT.internalError,
      stdout: '',
      stderr: `interlock explain: InternalError: ${echoValue(error instanceof Error ? error.message : String(error))}\n`,
    });
  }
}

function refuse(exitCode: number, message: string): CommandOutcome {
  return { exitCode, stdout: '', stderr: `interlock explain: ${message}\n` };
}

function explain(argv: readonly string[], env: Env): CommandOutcome {
  const parsed = parseCommandLine('explain', argv, env, EXPLAIN_FLAGS);
  if (!parsed.ok) return refuse(EXIT.invalidConfig, parsed.error.message);
  if (flagValue(parsed.value, HELP_FLAG)) return { exitCode: EXIT.pass, stdout: EXPLAIN_HELP, stderr: '' };
  if (flagValue(parsed.value, VERSION_FLAG)) return { exitCode: EXIT.pass, stdout: `${VERSION}\n`, stderr: '' };
  const spec = buildInterceptionSpec(parsed.value);
  if (!spec.ok) return refuse(EXIT.invalidConfig, spec.error.message);
  const dumps = readDumps(parsed.value);
  if (!dumps.ok)
    return refuse(dumps.error.reason === 'RulesUnreadable' ? EXIT.noInput : EXIT.dataError, dumps.error.message);
  if (dumps.value.length === 0)
    return refuse(
      EXIT.invalidConfig,
      'give at least one dump: --iptables-save, --ip6tables-save or --nft-ruleset (see --help)',
    );

  const families = FAMILIES[flagValue(parsed.value, FAMILY_FLAG) ?? 'auto'];
  const analysis = analyzeDumps(spec.value, dumps.value, { families });
  if (analysis.kind === 'parse-error') {
    const { error } = analysis;
    return refuse(EXIT.dataError, `${echoValue(error.source)}:${error.line}: ${error.message}`);
  }
  const report = reportOf(analysis);
  const failureExitCode = flagValue(parsed.value, FAILURE_EXIT_CODE_FLAG) ?? PRESETS[spec.value.mesh].failureExitCode;
  const exitCode = report.status === 'passed' ? EXIT.pass : failureExitCode;
  const configuration = specSummary(spec.value);
  const stdout =
    flagValue(parsed.value, FORMAT_FLAG) === 'json'
      ? `${JSON.stringify({ ...report, exitCode, configuration }, null, 2)}\n`
      : reportText(report, configuration);
  return { exitCode, stdout, stderr: '' };
}
