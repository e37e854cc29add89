import { EXIT } from '../../../config/exit-codes.js';
import { commandError } from '../../command-error.js';
import type { CommandOutcome } from '../../command-outcome.js';
import type { CommandSpec } from '../../command-spec.js';
import { completionScript } from '../../completion.js';
import { SHELLS, type Shell } from './flags.js';

/** `interlock completion bash|zsh|fish`, for the commands of `specs`. */
export function runCompletion(argv: readonly string[], specs: readonly CommandSpec[]): CommandOutcome {
  const [shell, ...extra] = argv;
  if (!SHELLS.includes(shell as Shell) || extra.length > 0)
    return commandError('completion', EXIT.invalidConfig, {
      reason: 'ConfigInvalid',
      message: `expected one shell: ${SHELLS.join(', ')}`,
    });
  return { exitCode: EXIT.pass, stdout: completionScript(shell as Shell, specs), stderr: '' };
}
