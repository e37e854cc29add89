import { echoValue } from '../config/echo-value.js';
import { EXIT } from '../config/exit-codes.js';
import type { CommandOutcome } from './command-outcome.js';

/**
 * The one error form of every command: `interlock CMD: Reason: sentence`, and after a usage error
 * (exit 64) one line saying where the usage is, never the whole help.
 */
export function commandError(
  command: string,
  exitCode: number,
  failure: { readonly reason: string; readonly message: string },
): CommandOutcome {
  const hint = exitCode === EXIT.invalidConfig ? `${usageHint(command)}\n` : '';
  return { exitCode, stdout: '', stderr: `interlock ${command}: ${failure.reason}: ${failure.message}\n${hint}` };
}

/** A command line that names no command Interlock has. */
export function unknownCommand(command: string | undefined): CommandOutcome {
  const message = command === undefined ? 'no command given' : `unknown command "${echoValue(command)}"`;
  return {
    exitCode: EXIT.invalidConfig,
    stdout: '',
    stderr: `interlock: ConfigInvalid: ${message}\n${usageHint(undefined)}\n`,
  };
}

function usageHint(command: string | undefined): string {
  return command === undefined
    ? "Run 'interlock help' for the commands."
    : `Run 'interlock ${command} --help' for its usage.`;
}
