import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import type { FlagDef } from '../../../config/flag-def.js';
import { parseAnyText, parseContainerNames } from '../../../config/flag-parsers.js';
import { INBOUND_PORT_FLAG, MESH_FLAG, OUTBOUND_PORT_FLAG } from '../../../config/interception-flags.js';
import { REPORT_EVENT_FLAG } from '../../../config/validate-config.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { PLATFORM_FLAG } from '../../flags/platform-flag.js';
import { MAX_MANIFEST_BYTES, mebibytes } from '../../input/read-manifest-input.js';
import { NATIVE_SIDECAR_FLAG, RULES_CHECK_FLAG } from '../manifest/flags.js';

export const FILENAME_FLAG: FlagDef<string> = {
  name: 'filename',
  short: 'f',
  kind: 'value',
  placeholder: 'FILE|-',
  help: `Kubernetes YAML or JSON to inject into (- or none: standard input); a regular file, at most ${mebibytes(MAX_MANIFEST_BYTES)}.`,
  parse: parseAnyText,
};

export const AFTER_CONTAINER_FLAG: FlagDef<string[]> = {
  name: 'after-container',
  kind: 'value',
  placeholder: 'NAME[,NAME]',
  help: 'Init containers that write the NAT rules (besides istio-init and linkerd-init): the validator goes after them.',
  parse: parseContainerNames,
};

export const INJECT_FLAGS: readonly FlagDef[] = [
  FILENAME_FLAG,
  AFTER_CONTAINER_FLAG,
  MESH_FLAG,
  IMAGE_FLAG,
  PLATFORM_FLAG,
  INBOUND_PORT_FLAG,
  OUTBOUND_PORT_FLAG,
  RULES_CHECK_FLAG,
  REPORT_EVENT_FLAG,
  NATIVE_SIDECAR_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
] as readonly FlagDef[];
