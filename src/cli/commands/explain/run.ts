import type { Family } from '../../../addr/ip.js';
import { buildInterceptionSpec, explicitFields } from '../../../config/build-interception.js';
import { applyPodMetadata } from '../../../config/pod-metadata.js';
import { ISTIO_CNI_VERSION_FLAG } from '../../../config/interception-flags.js';
import { ambientAnnotationsRead } from '../../../mesh/istio-ambient.js';
import { echoValue } from '../../../config/echo-value.js';
import { EXIT } from '../../../config/exit-codes.js';
import { EXPLAIN_FLAGS, FORMAT_FLAG } from '../../../config/explain-flags.js';
import { PRESETS } from '../../../config/interception.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagValue } from '../../../config/parsed-flags.js';
import { FAILURE_EXIT_CODE_FLAG, FAMILY_FLAG, type FamilyMode } from '../../../config/validate-config.js';
import { analyzeDumps } from '../../../rules-check/analyze.js';
import { specSummary } from '../../../config/spec-summary.js';
import { reportOf, reportText } from '../../../rules-check/report.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { missingFamilyDump, readDumps } from './dumps.js';
import { commandError } from '../../command-error.js';
import { podAnnotationsOf } from '../validate/pod-metadata-files.js';

type Env = Readonly<Record<string, string | undefined>>;

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

/** How long explain's analysis may run: real rulesets take milliseconds; validate's default --timeout. */
const EXPLAIN_ANALYSIS_MS = 10_000;
export function runExplain(argv: readonly string[], env: Env): Promise<CommandOutcome> {
  try {
    return Promise.resolve(explain(argv, env));
  } catch (error) {
    return Promise.resolve(
      commandError('explain', EXIT.internalError, {
        reason: 'InternalError',
        message: echoValue(error instanceof Error ? error.message : String(error)),
      }),
    );
  }
}

function refuse(exitCode: number, message: string, reason = 'ConfigInvalid'): CommandOutcome {
  return commandError('explain', exitCode, { reason, message });
}

function explain(argv: readonly string[], env: Env): CommandOutcome {
  const parsed = parseCommandLine('explain', argv, env, EXPLAIN_FLAGS);
  if (!parsed.ok) return refuse(EXIT.invalidConfig, parsed.error.message);
  const built = buildInterceptionSpec(parsed.value);
  if (!built.ok) return refuse(EXIT.invalidConfig, built.error.message);
  // The pod's annotations change its expected rules as the mesh's CNI plugin applies them.
  const annotations = podAnnotationsOf(parsed.value);
  if (!annotations.ok) return refuse(EXIT.invalidConfig, annotations.error.message);
  const metadata = { annotations: annotations.value, labels: undefined };
  const reads = ambientAnnotationsRead(flagValue(parsed.value, ISTIO_CNI_VERSION_FLAG));
  const spec = applyPodMetadata(built.value, metadata, explicitFields(parsed.value), reads).spec;
  const dumps = readDumps(parsed.value);
  if (!dumps.ok)
    return refuse(
      dumps.error.reason === 'RulesUnreadable' ? EXIT.noInput : EXIT.dataError,
      dumps.error.message,
      dumps.error.reason,
    );
  if (dumps.value.length === 0)
    return refuse(
      EXIT.invalidConfig,
      'give at least one dump: --iptables-save, --ip6tables-save or --nft-ruleset (see --help)',
    );

  const mode = flagValue(parsed.value, FAMILY_FLAG) ?? 'auto';
  const families = FAMILIES[mode];
  const missing = families === 'auto' ? undefined : missingFamilyDump(mode, families, dumps.value);
  if (missing) return refuse(EXIT.invalidConfig, missing);
  // Offline too, a hostile dump is bounded in time as the validator's analysis is by --timeout.
  const deadline = { at: performance.now() + EXPLAIN_ANALYSIS_MS, now: () => performance.now() };
  const analysis = analyzeDumps(spec, dumps.value, { families, deadline });
  if (analysis.kind === 'parse-error') {
    const { error } = analysis;
    return refuse(EXIT.dataError, `${echoValue(error.source)}:${error.line}: ${error.message}`, 'RulesUnparseable');
  }
  const report = reportOf(analysis);
  const failureExitCode = flagValue(parsed.value, FAILURE_EXIT_CODE_FLAG) ?? PRESETS[spec.mesh].failureExitCode;
  const exitCode = report.status === 'passed' ? EXIT.pass : failureExitCode;
  const configuration = specSummary(spec);
  const stdout =
    flagValue(parsed.value, FORMAT_FLAG) === 'json'
      ? `${JSON.stringify({ ...report, exitCode, configuration }, null, 2)}\n`
      : reportText(report, configuration);
  return { exitCode, stdout, stderr: '' };
}
