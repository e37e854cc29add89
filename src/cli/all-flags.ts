import type { FlagDef } from '../config/flag-def.js';
import { EXPLAIN_FLAGS } from '../config/explain-flags.js';
import { VALIDATE_FLAGS } from '../config/validate-config.js';

/** Every flag of every command wired here, each once (the README's table lists these). */
export const ALL_FLAGS: readonly FlagDef[] = [...new Set([...VALIDATE_FLAGS, ...EXPLAIN_FLAGS])];
