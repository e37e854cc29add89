import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { FlagDef } from '../../../config/flag-def.js';
import { LOG_LEVEL_FLAG } from '../../../config/validate-config.js';
import { WEBHOOK_FLAGS } from './server-flags.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { PLATFORM_FLAG } from '../../flags/platform-flag.js';

/** `interlock webhook`'s flags: its own table, and --image, --platform, --log-level, --help, --version shared with others. */
export const WEBHOOK_COMMAND_FLAGS: readonly FlagDef[] = [
  ...WEBHOOK_FLAGS,
  IMAGE_FLAG,
  PLATFORM_FLAG,
  LOG_LEVEL_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
];
