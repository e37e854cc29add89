import { EXIT } from '../../../config/exit-codes.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagValue } from '../../../config/parsed-flags.js';
import { BUILD_INFO } from '../../build-info.js';
import { commandError } from '../../command-error.js';
import { VERSION_COMMAND_FLAGS, VERSION_OUTPUT_FLAG } from './flags.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { VERSION, versionText } from '../../version.js';

/** `interlock version [--output json]`. */
export function runVersion(argv: readonly string[]): CommandOutcome {
  const parsed = parseCommandLine('version', argv, {}, VERSION_COMMAND_FLAGS);
  if (!parsed.ok) return commandError('version', EXIT.invalidConfig, parsed.error);
  const json = flagValue(parsed.value, VERSION_OUTPUT_FLAG) === 'json';
  const info = { version: VERSION, commit: BUILD_INFO.commit, buildDate: BUILD_INFO.date, node: process.version };
  return { exitCode: EXIT.pass, stdout: json ? `${JSON.stringify(info, null, 2)}\n` : versionText(), stderr: '' };
}
