import type { CniListing } from './cni-listing.js';
import { confFiles, goSortByName } from './conf-files.js';
import { loadConfigFile } from './config-file.js';
import { pluginProblem, type PluginInventory } from './plugin-binary.js';
import type { LoadedNetwork, PassedOver, RuntimeLoad } from './runtime-load.js';

export interface CrioOptions {
  /** crio.conf `cni_default_network`: the network pods get, by name; unset means the first loaded. */
  readonly defaultNetwork?: string;
  readonly binDirs: readonly string[];
}

/**
 * CRI-O (ocicni loadNetworks over libcni 1.3.0): counted files sorted by name; a file that does
 * not load, has no plugins, or whose plugins fail ValidateNetworkList (binary missing, VERSION
 * not answered, cniVersion not supported) is skipped with a log line; a list without a name is
 * named after its file; the first file of a name wins that name; the default network is the
 * first loaded one unless cni_default_network names another.
 */
export function crioLoad(listing: CniListing, inventory: PluginInventory, options: CrioOptions): RuntimeLoad {
  const sorted = goSortByName(confFiles(listing.entries));
  const candidates = sorted.map((entry) => entry.name);
  const passedOver: PassedOver[] = [];
  const byName = new Map<string, LoadedNetwork>();
  let firstName: string | undefined;
  for (const entry of sorted) {
    const load = loadConfigFile(entry, '1.3', listing.subdirectories);
    if (!load.ok) {
      passedOver.push({ file: entry.name, problem: load.error.kind, message: `${entry.name} ${load.error.message}` });
      continue;
    }
    const problems = load.list.plugins
      .map((plugin) => pluginProblem(plugin.type, load.list.cniVersion, inventory, options.binDirs))
      .filter((problem) => problem !== undefined);
    if (problems.length > 0) {
      passedOver.push({
        file: entry.name,
        problem: 'plugins-unusable',
        message: `${entry.name} fails validation: ${problems.map((problem) => problem.message).join('; ')}`,
      });
      continue;
    }
    const name = load.list.name === '' ? entry.name : load.list.name;
    if (byName.has(name)) {
      passedOver.push({
        file: entry.name,
        problem: 'duplicate-name',
        message: `${entry.name} names network "${name}", already loaded from ${byName.get(name)?.file}`,
      });
      continue;
    }
    byName.set(name, { file: entry.name, list: { ...load.list, name }, wrapped: load.wrapped, ifName: 'eth0' });
    firstName ??= name;
  }
  const wanted = options.defaultNetwork ?? firstName;
  const network = wanted === undefined ? undefined : byName.get(wanted);
  if (!network) {
    const failure =
      options.defaultNetwork !== undefined
        ? {
            kind: 'default-missing' as const,
            message: `no loadable configuration names the network "${options.defaultNetwork}" (cni_default_network) in ${listing.dir}`,
          }
        : {
            kind: sorted.length === 0 ? ('no-config' as const) : ('no-valid-network' as const),
            message: `no usable CNI configuration in ${listing.dir}`,
          };
    return { ok: false, runtime: 'crio', candidates, passedOver, error: failure };
  }
  return { ok: true, runtime: 'crio', candidates, networks: [network], passedOver };
}
