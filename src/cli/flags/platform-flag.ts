import type { DefaultedFlag } from '../../config/flag-def.js';
import { parsePlatform } from '../../config/flag-parsers.js';
import type { Platform } from '../../config/platform.js';

/** The cluster's distribution: one flag of manifest, inject and webhook, in a file of its own so each command's table can hold it. */
export const PLATFORM_FLAG: DefaultedFlag<Platform> = {
  name: 'platform',
  kind: 'value',
  placeholder: 'PLATFORM',
  help: "{default} (default) or openshift: no runAsUser/runAsGroup on the validator or the webhook (the SCC assigns one from the namespace's range); the node agent runs as spc_t under the privileged SCC (docs/operator.md).",
  parse: parsePlatform,
  default: 'kubernetes',
};
