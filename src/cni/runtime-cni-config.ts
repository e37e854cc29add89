import { fail, ok, type Result } from '../reason/result.js';
import { isJsonObject } from './go-json.js';

/** A pod network the runtime holds loaded: libcni's list, as go-cni reports it. */
export interface HeldNetwork {
  readonly name: string;
  readonly cniVersion: string;
  /** The plugin types of the chain, in order. */
  readonly chain: readonly string[];
  /** The bytes libcni loaded: the file's text for a conflist (a .conf is re-encoded into a list). */
  readonly source: string;
  readonly ifName: string;
}

/**
 * What containerd's CRI plugin reports it loaded (verbose `Status`, keys `cniconfig` and
 * `lastCNILoadStatus`, as `crictl info` prints them): the directories it uses and the pod
 * networks it holds. go-cni's own loopback network (interface `lo`) is left out.
 */
export interface RuntimeCniConfig {
  readonly confDir: string;
  readonly pluginDirs: readonly string[];
  readonly maxConfNum: number;
  readonly networks: readonly HeldNetwork[];
  /** `OK`, or the error of the syncer's last load of the directory. */
  readonly lastLoadStatus: string;
}

type Invalid = 'RuntimeAnswerInvalid';
const invalid = (what: string) => fail<Invalid>('RuntimeAnswerInvalid', `containerd's verbose Status: ${what}`);

/** Parses the verbose Status info map; anything not of go-cni's shape is refused, never guessed. */
export function parseRuntimeCniConfig(info: ReadonlyMap<string, string>): Result<RuntimeCniConfig, Invalid> {
  const text = info.get('cniconfig');
  if (text === undefined) return invalid('no "cniconfig" entry (only containerd reports the configuration it loaded)');
  const status = info.get('lastCNILoadStatus');
  if (status === undefined) return invalid('no "lastCNILoadStatus" entry');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid('"cniconfig" is not JSON');
  }
  if (!isJsonObject(value)) return invalid('"cniconfig" is not an object');
  const { PluginDirs: dirs, PluginConfDir: confDir, PluginMaxConfNum: max, Networks: networks } = value;
  if (!isStringArray(dirs)) return invalid('"cniconfig".PluginDirs is not a list of strings');
  if (typeof confDir !== 'string') return invalid('"cniconfig".PluginConfDir is not a string');
  if (typeof max !== 'number' || !Number.isInteger(max))
    return invalid('"cniconfig".PluginMaxConfNum is not an integer');
  if (networks !== null && !Array.isArray(networks)) return invalid('"cniconfig".Networks is not a list');
  const held: HeldNetwork[] = [];
  for (const [index, item] of (networks ?? []).entries()) {
    const network = heldNetwork(item);
    if (typeof network === 'string') return invalid(`"cniconfig".Networks[${index}]: ${network}`);
    if (network.ifName !== 'lo') held.push(network);
  }
  return ok({ confDir, pluginDirs: dirs, maxConfNum: max, networks: held, lastLoadStatus: status });
}

function heldNetwork(item: unknown): HeldNetwork | string {
  if (!isJsonObject(item)) return 'not an object';
  const { Config: config, IFName: ifName } = item;
  if (typeof ifName !== 'string') return 'IFName is not a string';
  if (!isJsonObject(config)) return 'Config is not an object';
  const { Name: name, CNIVersion: cniVersion, Plugins: plugins, Source: source } = config;
  if (typeof name !== 'string' || typeof cniVersion !== 'string' || typeof source !== 'string')
    return 'Config.Name, CNIVersion or Source is not a string';
  if (!Array.isArray(plugins)) return 'Config.Plugins is not a list';
  const chain: string[] = [];
  for (const plugin of plugins as unknown[]) {
    const network = isJsonObject(plugin) ? plugin['Network'] : undefined;
    const type = isJsonObject(network) ? network['type'] : undefined;
    if (typeof type !== 'string') return 'a plugin without a Network.type string';
    chain.push(type);
  }
  return { name, cniVersion, chain, source, ifName };
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
