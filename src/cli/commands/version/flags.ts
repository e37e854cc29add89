import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { FlagDef } from '../../../config/flag-def.js';
import { textOrJsonFlag } from '../../flags/text-or-json-flag.js';

export const VERSION_OUTPUT_FLAG = textOrJsonFlag();

export const VERSION_COMMAND_FLAGS: readonly FlagDef[] = [VERSION_OUTPUT_FLAG, HELP_FLAG, VERSION_FLAG];
