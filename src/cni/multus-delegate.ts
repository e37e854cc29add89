import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import { confListFromValue, wrappedConfFromValue, type ConfList, type Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import type { LoadedNetwork } from './runtime-load.js';

/** The plugin types of Multus's own files: thin (`multus`) and the thick daemon's shim. */
const MULTUS_TYPES = new Set(['multus', 'multus-shim']);

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
 * its base name in the configuration directory, or a network name some file there carries)
 * wins; else thin Multus's inline `delegates[0]`; else (the thick shim) the first file of the
 * auto-config directory, the runtime's directory in upstream's daemon-config, other than Multus's own.
 */
export function multusDelegate(
  network: LoadedNetwork,
  listing: CniListing,
  candidates: readonly string[],
  libcni: Libcni,
): MultusDelegate {
  const multusFile = network.file;
  const raw = network.list.plugins[0]?.raw ?? {};
  const clusterNetwork = stringField(raw, 'clusterNetwork');
  if (clusterNetwork !== undefined) return byClusterNetwork(multusFile, clusterNetwork, listing, libcni);
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

function byClusterNetwork(multusFile: string, name: string, listing: CniListing, libcni: Libcni): MultusDelegate {
  if (name.includes('/')) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    return fromFile(multusFile, base, listing, libcni, `clusterNetwork ${name}`);
  }
  const named = confFiles(listing.entries).find((entry) => {
    const load = loadConfigFile(entry, libcni);
    return load.ok && load.list.name === name && !isMultusFile(entry.name, listing, libcni);
  });
  if (named) return fromFile(multusFile, named.name, listing, libcni, `clusterNetwork ${name}`);
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
