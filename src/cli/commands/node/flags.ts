import type { FlagDef } from '../../../config/flag-def.js';
import { NODE_FLAGS } from '../../../node-agent/node-flags.js';
import { CNI_AUDIT_FLAGS } from '../cni-check/run.js';

/** The agent's flags and, for `--cni-audit`, cni-check's directory flags: one table each, one reader. */
export const NODE_COMMAND_FLAGS: readonly FlagDef[] = [...(NODE_FLAGS as readonly FlagDef[]), ...CNI_AUDIT_FLAGS];
