import { EXIT } from '../../../config/exit-codes.js';
import { writeTerminationLog } from '../../../output/termination-log.js';
import { formatTerminationMessage } from '../../../verdict/termination-message.js';
import { commandError } from '../../command-error.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { commandSpec } from '../../command-table.js';
import { formatCommandHelp } from '../../help.js';
import { isHelpOrVersionSwitch } from '../../help-switch.js';
import { versionText } from '../../version.js';
import { terminationLogForRefusal } from './refusal-termination-log.js';

/**
 * `validate` with --help, -h or --version never exits 0: the image's entrypoint is `interlock
 * validate`, so a container whose args are `["--help"]` runs exactly this, and nothing tells a
 * person from such a pod (a pod may ask for a TTY). A lone switch still prints what was asked
 * (the usage, the version) on stdout, then exits 64; `interlock help validate` is exit 0.
 * Undefined when no switch is given.
 */
export function validateSwitchRefusal(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  width: number,
): CommandOutcome | undefined {
  const switches = argv.filter(isHelpOrVersionSwitch);
  const first = switches[0];
  if (first === undefined) return undefined;
  const help = switches.some((arg) => !arg.startsWith('--version'));
  if (switches.length < argv.length)
    return refuseValidate(
      argv,
      env,
      `${first} beside other flags is not a verdict: validate exits 0 only on proof, so it refuses instead (run 'interlock help validate' for the usage)`,
      help ? width : undefined,
    );
  // `--help=x` alone: the parser's own refusal (a switch takes no value) says it better.
  if (first.includes('=')) return undefined;
  const lone = refuseValidate(
    argv,
    env,
    `validate ${first} prints the ${help ? 'usage' : 'version'} and exits without a verdict: a validator exits 0 only on proof, so this is exit 64 (for the usage with exit 0, run 'interlock help validate'; for the version, 'interlock version')`,
    help ? width : undefined,
  );
  return help ? lone : { ...lone, stdout: versionText() };
}

/**
 * A refused validator configuration: exit 64, the termination message `kubectl describe` shows,
 * and the usage on stdout when help was asked for (printed instead of validating, never instead of the refusal).
 */
export function refuseValidate(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  message: string,
  helpWidth?: number,
): CommandOutcome {
  const log = terminationLogForRefusal(argv, env);
  const verdict = { outcome: 'config', reason: 'ConfigInvalid', message, evidence: [], checks: [] } as const;
  writeTerminationLog(log.path, formatTerminationMessage(verdict, []), log.explicit);
  const spec = commandSpec('validate');
  const refusal = commandError('validate', EXIT.invalidConfig, { reason: 'ConfigInvalid', message });
  return helpWidth === undefined || !spec ? refusal : { ...refusal, stdout: formatCommandHelp(spec, helpWidth) };
}
