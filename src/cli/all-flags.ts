import type { FlagDef } from '../config/flag-def.js';
import { EXPLAIN_FLAGS } from '../config/explain-flags.js';
import { VALIDATE_FLAGS } from '../config/validate-config.js';
import { NODE_FLAGS } from '../node-agent/node-flags.js';
import { CNI_CHECK_FLAGS } from './cni-check-command.js';
import { INJECT_FLAGS } from './inject-command.js';
import { MANIFEST_FLAGS } from './manifest-command.js';
import { WEBHOOK_COMMAND_FLAGS } from './webhook-command.js';

/** Every flag of every command, each declaration once (the README's table lists these). */
export const ALL_FLAGS: readonly FlagDef[] = [
  ...new Set([
    ...VALIDATE_FLAGS,
    ...EXPLAIN_FLAGS,
    ...MANIFEST_FLAGS,
    ...INJECT_FLAGS,
    ...(NODE_FLAGS as readonly FlagDef[]),
    ...CNI_CHECK_FLAGS,
    ...WEBHOOK_COMMAND_FLAGS,
  ]),
];
