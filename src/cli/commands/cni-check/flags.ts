import { formatDuration } from '../../../config/duration.js';
import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import { FORMAT_FLAG } from '../../../config/explain-flags.js';
import type { DefaultedFlag, FlagDef } from '../../../config/flag-def.js';
import {
  oneOf,
  parseCountOrAll,
  parseCriEndpointChoice,
  parseDirList,
  parseDuration,
  parseHostRoot,
  parseNonBlank,
  parsePluginType,
} from '../../../config/flag-parsers.js';
import { MESH_FLAG } from '../../../config/interception-flags.js';
import type { RuntimeName } from '../../../cni/runtime-load.js';

export const CNI_CONF_DIR_FLAG: DefaultedFlag<string> = {
  name: 'cni-conf-dir',
  kind: 'value',
  env: 'INTERLOCK_CNI_CONF_DIR',
  placeholder: 'DIR',
  help: "The runtime's CNI configuration directory (default {default}).",
  parse: parseNonBlank('expected a value', 'as given'),
  default: '/etc/cni/net.d',
};

export const CNI_BIN_DIR_FLAG: DefaultedFlag<readonly string[]> = {
  name: 'cni-bin-dir',
  kind: 'value',
  env: 'INTERLOCK_CNI_BIN_DIR',
  placeholder: 'DIR[,DIR]',
  help: 'The plugin binary directories, searched in order (default {default}).',
  parse: parseDirList,
  default: ['/opt/cni/bin'],
  showDefault: (dirs) => dirs.join(','),
};

export const RUNTIME_FLAG: DefaultedFlag<RuntimeName> = {
  name: 'runtime',
  kind: 'value',
  env: 'INTERLOCK_CNI_RUNTIME',
  placeholder: 'containerd|crio',
  help: 'Whose rules pick the configuration file (default {default}).',
  parse: oneOf<RuntimeName>(['containerd', 'crio'], { say: 'bare', exact: true }),
  default: 'containerd',
};

export const MESH_PLUGIN_FLAG: FlagDef<string> = {
  name: 'mesh-plugin',
  kind: 'value',
  env: 'INTERLOCK_MESH_PLUGIN',
  placeholder: 'TYPE',
  help: "The mesh plugin's type (default linkerd-cni / istio-cni; required for generic).",
  parse: parsePluginType,
};

export const VERSION_TIMEOUT_FLAG: DefaultedFlag<number> = {
  name: 'version-timeout',
  kind: 'value',
  env: 'INTERLOCK_CNI_VERSION_TIMEOUT',
  placeholder: 'DURATION',
  help: 'Deadline of each plugin VERSION query; they run concurrently (default {default}).',
  parse: parseDuration(10, 60_000),
  default: 2000,
  showDefault: formatDuration,
};

export const MAX_CONF_NUM_FLAG: DefaultedFlag<number> = {
  name: 'max-conf-num',
  kind: 'value',
  env: 'INTERLOCK_CNI_MAX_CONF_NUM',
  placeholder: 'N',
  help: "containerd's CRI max_conf_num: files loaded in order, the first is the pods' network (default {default}; 0 means all).",
  parse: parseCountOrAll,
  default: 1,
};

export const CRIO_DEFAULT_NETWORK_FLAG: FlagDef<string> = {
  name: 'crio-default-network',
  kind: 'value',
  env: 'INTERLOCK_CRIO_DEFAULT_NETWORK',
  placeholder: 'NAME',
  help: "CRI-O's cni_default_network, when crio.conf sets one (default: the first loaded network).",
  parse: parseNonBlank('expected a value', 'as given'),
};

export const CNI_MULTUS_CONF_DIR_FLAG: DefaultedFlag<string> = {
  name: 'cni-multus-conf-dir',
  kind: 'value',
  env: 'INTERLOCK_CNI_MULTUS_CONF_DIR',
  placeholder: 'DIR',
  help: "Multus's attachment directory, where a non-chained mesh plugin's conf lives (default {default}; absent: no Multus attachments).",
  parse: parseNonBlank('expected a value', 'as given'),
  default: '/etc/cni/multus/net.d',
};

export const CNI_CRI_ENDPOINT_FLAG: DefaultedFlag<string> = {
  name: 'cri-endpoint',
  kind: 'value',
  env: 'INTERLOCK_CNI_CRI_ENDPOINT',
  placeholder: 'auto|none|unix:///PATH',
  help: "Ask the runtime what it loaded (verbose Status, as `crictl info`) before judging (default {default}: containerd's /run/containerd/containerd.sock, then CRI-O's /var/run/crio/crio.sock, under --host-root; a warning says when none answered and the directories are guessed). Its conf dir, plugin dirs, max_conf_num and runtime are taken where no flag names them; where a flag and the runtime disagree is a finding. `none`: ask nothing.",
  parse: parseCriEndpointChoice,
  default: 'auto',
};

export const HOST_ROOT_FLAG: DefaultedFlag<string> = {
  name: 'host-root',
  kind: 'value',
  env: 'INTERLOCK_HOST_ROOT',
  placeholder: 'DIR',
  help: "Where the node's root filesystem is seen (default {default}; `/host` in `kubectl debug node/...`): the runtime's default sockets and the paths it answers are read under it.",
  parse: parseHostRoot,
  default: '/',
};

/** What the audit reads: cni-check's and, for --cni-audit, node's. */
export const CNI_AUDIT_FLAGS: readonly FlagDef[] = [
  CNI_CONF_DIR_FLAG,
  CNI_BIN_DIR_FLAG,
  RUNTIME_FLAG,
  MESH_PLUGIN_FLAG,
  VERSION_TIMEOUT_FLAG,
  MAX_CONF_NUM_FLAG,
  CRIO_DEFAULT_NETWORK_FLAG,
  CNI_MULTUS_CONF_DIR_FLAG,
] as readonly FlagDef[];

export const CNI_CHECK_FLAGS: readonly FlagDef[] = [
  MESH_FLAG,
  ...CNI_AUDIT_FLAGS,
  CNI_CRI_ENDPOINT_FLAG,
  HOST_ROOT_FLAG,
  FORMAT_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
];
