import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import { confListFromValue, wrappedConfFromValue, type ConfList, type Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import type { LoadedNetwork } from './runtime-load.js';

/** The plugin types of Multus's own files: thin (`multus`) and the thick daemon's shim. */
const MULTUS_TYPES = new Set(['multus', 'multus-shim']);
/** Multus's confDir when its file sets none (pkg/types/conf.go defaultConfDir, multus-cni v4.2.2). */
const MULTUS_DEFAULT_CONF_DIR = '/etc/cni/multus/net.d';

/**
 * Where Multus sends the pod's primary network: the network the runtime loaded is Multus's own
 * file, so the chain that sets the pod up is the one Multus delegates to.
 */
export type MultusDelegate =
  | { readonly ok: true; readonly multusFile: string; readonly network: LoadedNetwork; readonly inline: boolean }
  | { readonly ok: false; readonly multusFile: string; readonly missing: string; readonly message: string };

/** Whether the loaded network is Multus's own file (one plugin, `multus` or `multus-shim`). */
export function isMultus(network: LoadedNetwork): boolean {
  return network.list.plugins.length === 1 && MULTUS_TYPES.has(network.list.plugins[0]?.type ?? '');
}

/**
 * Multus's rule for the primary network, over plain data: `clusterNetwork` (a file path, read by
 * its base name in the configuration directory, or a network name some file of Multus's confDir
 * carries) wins; else thin Multus's inline `delegates[0]`; else (the thick shim) the first file of
 * the auto-config directory, the runtime's directory in upstream's daemon-config, other than
 * Multus's own. `multus` is the audit's listing of Multus's own directory, when it read one.
 */
export function multusDelegate(
  network: LoadedNetwork,
  listing: CniListing,
  candidates: readonly string[],
  libcni: Libcni,
  multus?: CniListing,
): MultusDelegate {
  const multusFile = network.file;
  const raw = network.list.plugins[0]?.raw ?? {};
  const clusterNetwork = stringField(raw, 'clusterNetwork');
  if (clusterNetwork !== undefined) {
    if (network.list.plugins[0]?.type !== 'multus')
      return byClusterNetwork(multusFile, clusterNetwork, listing, libcni);
    // Thin Multus resolves clusterNetwork through its API client only, and with it set it reads no
    // delegates (pkg/types/conf.go LoadNetConf, pkg/k8sclient GetDefaultNetworks, v4.2.2).
    if (stringField(raw, 'kubeconfig') === undefined)
      return missing(
        multusFile,
        clusterNetwork,
        `${multusFile} names clusterNetwork ${clusterNetwork} but no kubeconfig: thin Multus resolves clusterNetwork only with one, and then ignores its delegates`,
      );
    const names = clusterNetwork.includes('/') ? listing : confDirListing(raw, listing, multus);
    return byClusterNetwork(multusFile, clusterNetwork, names, libcni, names !== listing);
  }
  const delegates = raw.delegates;
  if (Array.isArray(delegates) && delegates.length > 0) {
    const inline = inlineDelegate(delegates[0], libcni);
    return inline
      ? { ok: true, multusFile, inline: true, network: { ...network, list: inline.list, wrapped: inline.wrapped } }
      : missing(multusFile, 'delegates[0]', `${multusFile}'s delegates[0] is not a network configuration`);
  }
  const first = candidates.find((name) => name !== multusFile && !isMultusFile(name, listing, libcni));
  if (first === undefined)
    return missing(
      multusFile,
      'a primary network',
      `${multusFile} names no clusterNetwork and no delegates, and no other file of ${listing.dir} is there for Multus to pick`,
    );
  return fromFile(multusFile, first, listing, libcni, `the first file of ${listing.dir}`);
}

/**
 * The directory thin Multus looks a network name up in: its `confDir` (default Multus's own
 * directory), as the audit reads it (the runtime's or Multus's listing; a containerised audit
 * reads the node's directories under a mount prefix, so a listing's path may end with it).
 * Neither: an empty listing under that name, so the name is missing there.
 */
function confDirListing(raw: Readonly<Record<string, unknown>>, listing: CniListing, multus?: CniListing): CniListing {
  const confDir = (stringField(raw, 'confDir') ?? MULTUS_DEFAULT_CONF_DIR).replace(/\/+$/, '');
  const isIt = (dir: string) => {
    const trimmed = dir.replace(/\/+$/, '');
    return trimmed === confDir || (confDir.startsWith('/') && trimmed.endsWith(confDir));
  };
  if (isIt(listing.dir)) return listing;
  if (multus && (isIt(multus.dir) || confDir === MULTUS_DEFAULT_CONF_DIR)) return multus;
  return { dir: confDir, entries: [] };
}

/** `elsewhere`: the listing is not the runtime's directory, so the delegate is named by its path. */
function byClusterNetwork(
  multusFile: string,
  name: string,
  listing: CniListing,
  libcni: Libcni,
  elsewhere = false,
): MultusDelegate {
  if (name.includes('/')) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    return fromFile(multusFile, base, listing, libcni, `clusterNetwork ${name}`);
  }
  const named = confFiles(listing.entries).find((entry) => {
    const load = loadConfigFile(entry, libcni);
    return load.ok && load.list.name === name && !isMultusFile(entry.name, listing, libcni);
  });
  if (named) {
    const found = fromFile(multusFile, named.name, listing, libcni, `clusterNetwork ${name}`);
    if (!found.ok || !elsewhere) return found;
    return { ...found, network: { ...found.network, file: `${listing.dir}/${named.name}` } };
  }
  return missing(
    multusFile,
    name,
    `${multusFile} names clusterNetwork ${name}, and no file of ${listing.dir} carries a network of that name (a NetworkAttachmentDefinition is not visible from the node)`,
  );
}

function fromFile(multusFile: string, file: string, listing: CniListing, libcni: Libcni, how: string): MultusDelegate {
  const entry = confFiles(listing.entries).find((item) => item.name === file);
  if (!entry)
    return missing(multusFile, file, `${multusFile} delegates (${how}) to ${file}, which is not in ${listing.dir}`);
  const load = loadConfigFile(entry, libcni);
  if (!load.ok)
    return missing(multusFile, file, `${multusFile} delegates (${how}) to ${file}, which ${load.error.message}`);
  return {
    ok: true,
    multusFile,
    inline: false,
    network: { file, list: load.list, wrapped: load.wrapped, ifName: 'eth0' },
  };
}

function inlineDelegate(value: unknown, libcni: Libcni): { list: ConfList; wrapped: boolean } | undefined {
  const isList = typeof value === 'object' && value !== null && Object.hasOwn(value, 'plugins');
  const parsed = isList ? confListFromValue(value, libcni) : wrappedConfFromValue(value);
  return parsed.ok ? { list: parsed.value, wrapped: !isList } : undefined;
}

function isMultusFile(name: string, listing: CniListing, libcni: Libcni): boolean {
  const entry = listing.entries.find((item) => item.name === name);
  const load = entry && loadConfigFile(entry, libcni);
  return load?.ok === true && load.list.plugins.some((plugin) => MULTUS_TYPES.has(plugin.type));
}

function stringField(raw: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = raw[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const missing = (multusFile: string, name: string, message: string): MultusDelegate => ({
  ok: false,
  multusFile,
  missing: name,
  message,
});
