import type { FlagDef } from '../config/flag-def.js';
import { COMMANDS } from './command-table.js';

/** Every flag of every command, each declaration once (docs/reference.md's table lists these). */
export const ALL_FLAGS: readonly FlagDef[] = [...new Set(COMMANDS.flatMap((spec) => spec.flags))];
