import type { CniListing } from './cni-listing.js';
import { confFiles, goSortByName } from './conf-files.js';
import { loadConfigFile } from './config-file.js';
import type { LoadedNetwork, RuntimeLoad } from './runtime-load.js';

export interface ContainerdOptions {
  /**
   * The CRI plugin's `max_conf_num` (default 1; `ctr run --cni` uses go-cni's default, also 1).
   * 0 or less means every file.
   */
  readonly maxConfNum?: number;
}

/**
 * containerd 1.6 (go-cni 1.1.7 loadFromConfDir over libcni 1.1.2): counted files sorted by name;
 * each is loaded in turn until max_conf_num networks are loaded; the first file that fails to
 * load fails the whole load (nothing is skipped), and the runtime then has no pod network.
 */
export function containerdLoad(listing: CniListing, options: ContainerdOptions = {}): RuntimeLoad {
  const max = options.maxConfNum ?? 1;
  const sorted = goSortByName(confFiles(listing.entries));
  const candidates = sorted.map((entry) => entry.name);
  if (sorted.length === 0) {
    return {
      ok: false,
      runtime: 'containerd',
      candidates,
      passedOver: [],
      error: { kind: 'no-config', message: `no network configuration (.conf, .conflist, .json) in ${listing.dir}` },
    };
  }
  const networks: LoadedNetwork[] = [];
  for (const entry of sorted) {
    const load = loadConfigFile(entry, '1.1');
    if (!load.ok)
      return {
        ok: false,
        runtime: 'containerd',
        candidates,
        passedOver: [],
        error: { kind: load.error.kind, file: entry.name, message: `${entry.name} ${load.error.message}` },
      };
    networks.push({ file: entry.name, list: load.list, wrapped: load.wrapped, ifName: `eth${networks.length}` });
    if (networks.length === max) break;
  }
  const [first, ...rest] = networks as [LoadedNetwork, ...LoadedNetwork[]];
  return { ok: true, runtime: 'containerd', candidates, networks: [first, ...rest], passedOver: [] };
}
