import type { FlagDef } from './flag-def.js';
import { parseArgvOnly } from './flag-parsers.js';

// Switches without `env`: the process environment can never print help or a version instead of
// running the command (INTERLOCK_HELP in a pod's env must not turn a validation into an exit 0).

/** Every command's table holds these two. */
export const HELP_FLAG: FlagDef<boolean> = {
  name: 'help',
  short: 'h',
  kind: 'switch',
  help: 'Print this help and exit 0 (validate: 64, not a verdict).',
  parse: parseArgvOnly,
};
export const VERSION_FLAG: FlagDef<boolean> = {
  name: 'version',
  kind: 'switch',
  help: 'Print the version and exit 0 (validate: 64, not a verdict).',
  parse: parseArgvOnly,
};
