import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { FlagDef } from '../../../config/flag-def.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export const COMPLETION_FLAGS: readonly FlagDef[] = [HELP_FLAG, VERSION_FLAG];
