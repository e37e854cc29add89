import { EXIT } from '../config/exit-codes.js';
import { HELP_FLAG, VERSION_FLAG } from '../config/command-flags.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import { flagValue } from '../config/parsed-flags.js';
import { commandError, unknownCommand } from './command-error.js';
import type { CommandOutcome } from './command-outcome.js';
import { COMMANDS, commandSpec } from './command-table.js';
import { formatCommandHelp, formatTopHelp } from './help.js';
import { versionText } from './version.js';

const printed = (stdout: string): CommandOutcome => ({ exitCode: EXIT.pass, stdout, stderr: '' });

/** `--help` or `-h` after `help`: asking for help's help is asking for help. */
const isHelpSwitch = (arg: string): boolean => arg === '--help' || arg === '-h';

/** `interlock help [COMMAND]`; a `--help` or `-h` among its words changes nothing. */
export function runHelp(argv: readonly string[], width: number): CommandOutcome {
  const [name, ...extra] = argv.filter((arg) => !isHelpSwitch(arg));
  if (name === undefined || (name === 'help' && extra.length === 0)) return printed(formatTopHelp(COMMANDS, width));
  const spec = commandSpec(name);
  if (!spec) return unknownCommand(name);
  if (extra.length > 0)
    return commandError('help', EXIT.invalidConfig, {
      reason: 'ConfigInvalid',
      message: 'takes one command: interlock help COMMAND',
    });
  return printed(formatCommandHelp(spec, width));
}

/**
 * `interlock` alone prints the commands, as kubectl, istioctl and linkerd do; at a terminal it
 * exits 0, elsewhere 64 (fail closed: an init container given no command has proven nothing).
 */
export function runBare(width: number, interactive: boolean): CommandOutcome {
  const help = formatTopHelp(COMMANDS, width);
  if (interactive) return printed(help);
  return {
    exitCode: EXIT.invalidConfig,
    stdout: help,
    stderr: "interlock: ConfigInvalid: no command given (an init container runs 'interlock validate')\n",
  };
}

/**
 * `interlock CMD ... --help` (or `-h`, `--version`) for every command, answered from the command
 * table before the command runs. A command line that does not parse is left to the command,
 * which refuses it in its own words (validate also writes its termination message).
 */
export function helpOrVersion(command: string, argv: readonly string[], width: number): CommandOutcome | undefined {
  const spec = commandSpec(command);
  if (!spec) return undefined;
  const flags = spec.positional ? argv.filter((arg) => !(spec.positional ?? []).includes(arg)) : argv;
  // The environment is left out: a bad INTERLOCK_* variable must not hide the help.
  const parsed = parseCommandLine(spec.name, flags, {}, spec.flags);
  if (!parsed.ok) return undefined;
  if (flagValue(parsed.value, HELP_FLAG) === true) return printed(formatCommandHelp(spec, width));
  if (flagValue(parsed.value, VERSION_FLAG) === true) return printed(versionText());
  return undefined;
}
