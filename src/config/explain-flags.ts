import { HELP_FLAG, VERSION_FLAG } from './command-flags.js';
import { valueFlag, type FlagDef } from './flag-def.js';
import { oneOf, parsePath } from './flag-parsers.js';
import { INTERCEPTION_FLAGS } from './interception-flags.js';
import { FAILURE_EXIT_CODE_FLAG, FAMILY_FLAG, POD_ANNOTATIONS_FLAG } from './validate-config.js';

export type ReportFormat = 'text' | 'json';
export type IptablesBackendName = 'nft' | 'legacy';

export const IPTABLES_SAVE_FLAG = valueFlag(
  'iptables-save',
  'FILE',
  'IPv4 iptables-save output (backend from its header, else --iptables-backend).',
  parsePath,
);
export const IP6TABLES_SAVE_FLAG = valueFlag('ip6tables-save', 'FILE', 'IPv6 ip6tables-save output.', parsePath);
export const IPTABLES_LEGACY_SAVE_FLAG = valueFlag(
  'iptables-legacy-save',
  'FILE',
  'IPv4 iptables-legacy-save output, when both backends were saved.',
  parsePath,
);
export const IP6TABLES_LEGACY_SAVE_FLAG = valueFlag(
  'ip6tables-legacy-save',
  'FILE',
  'IPv6 ip6tables-legacy-save output.',
  parsePath,
);
export const NFT_RULESET_FLAG = valueFlag('nft-ruleset', 'FILE', 'Output of `nft -j list ruleset`.', parsePath);
export const IPTABLES_BACKEND_FLAG = valueFlag(
  'iptables-backend',
  'nft|legacy',
  'Backend of --iptables-save/--ip6tables-save files whose header does not say (default {default}).',
  oneOf<IptablesBackendName>(['nft', 'legacy']),
  { default: 'nft' },
);
export const FORMAT_FLAG = valueFlag(
  'output',
  'text|json',
  'Report format (default {default}). --format and INTERLOCK_FORMAT, its old names, still work (deprecated).',
  oneOf<ReportFormat>(['text', 'json']),
  { default: 'text', short: 'o', deprecated: { name: 'format', env: 'INTERLOCK_FORMAT' } },
);

export const EXPLAIN_FLAGS: readonly FlagDef[] = [
  ...INTERCEPTION_FLAGS,
  IPTABLES_SAVE_FLAG,
  IP6TABLES_SAVE_FLAG,
  IPTABLES_LEGACY_SAVE_FLAG,
  IP6TABLES_LEGACY_SAVE_FLAG,
  NFT_RULESET_FLAG,
  IPTABLES_BACKEND_FLAG,
  FAMILY_FLAG,
  FORMAT_FLAG,
  FAILURE_EXIT_CODE_FLAG,
  POD_ANNOTATIONS_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
] as readonly FlagDef[];
