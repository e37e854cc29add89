import type { CniListing } from './cni-listing.js';
import { confFiles, goSortByName } from './conf-files.js';
import type { Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import type { LoadedNetwork } from './runtime-load.js';

/**
 * A non-chained mesh plugin: its configuration is a network attachment of its own in Multus's
 * directory (Istio's OpenShift profile, `chained: false`; Kuma's chart default), which pods
 * request with `k8s.v1.cni.cncf.io/networks`. The first file there whose only plugin is the
 * mesh plugin, as a loaded network, so its binary and version are judged like any chain.
 */
export function meshAttachment(
  multus: CniListing | undefined,
  meshPlugin: string,
  libcni: Libcni,
): LoadedNetwork | undefined {
  if (!multus) return undefined;
  for (const entry of goSortByName(confFiles(multus.entries))) {
    const load = loadConfigFile(entry, libcni);
    if (!load.ok || load.list.plugins.length !== 1 || load.list.plugins[0]?.type !== meshPlugin) continue;
    return { file: `${multus.dir}/${entry.name}`, list: load.list, wrapped: load.wrapped, ifName: 'net1' };
  }
  return undefined;
}
