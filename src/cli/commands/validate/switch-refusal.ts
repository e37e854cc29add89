import { EXIT } from '../../../config/exit-codes.js';
import { writeTerminationLog } from '../../../output/termination-log.js';
import { formatTerminationMessage } from '../../../verdict/termination-message.js';
import { commandError } from '../../command-error.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { commandSpec } from '../../command-table.js';
import { formatCommandHelp } from '../../help.js';
import { isHelpOrVersionSwitch } from '../../help-switch.js';
import { terminationLogForRefusal } from './refusal-termination-log.js';

/**
 * `validate` with --help or --version beside other flags is a validator configured in a pod, not a
 * person asking: it must not exit 0 without a verdict. Undefined when the switches stand alone.
 */
export function validateSwitchRefusal(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  width: number,
): CommandOutcome | undefined {
  const switches = argv.filter(isHelpOrVersionSwitch);
  if (switches.length === 0 || switches.length === argv.length) return undefined;
  const help = switches.some((arg) => !arg.startsWith('--version'));
  return refuseValidate(
    argv,
    env,
    `${switches[0] ?? ''} beside other flags is not a verdict: validate exits 0 only on proof, so it refuses instead (run 'interlock validate --help' alone for the usage)`,
    help ? width : undefined,
  );
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
