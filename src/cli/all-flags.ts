import type { CommandName, FlagDef } from '../config/flag-def.js';
import { COMMANDS } from './command-table.js';

/** Every flag of every command, each declaration once (docs/reference.md's table lists these). */
export const ALL_FLAGS: readonly FlagDef[] = [...new Set(COMMANDS.flatMap((spec) => spec.flags))];

/** The commands whose table holds the flag, in the order `interlock help` lists them. */
export function commandsOf(flag: FlagDef): CommandName[] {
  return COMMANDS.filter((spec) => spec.flags.includes(flag)).map((spec) => spec.name);
}
