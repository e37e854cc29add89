import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import { confListFromValue, wrappedConfFromValue, type ConfList, type Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import type { LoadedNetwork } from './runtime-load.js';
import { definitionChain, definitionKey, networkFromConfDir, type DefinitionRead } from './attachment-definition.js';
import { DEFAULT_MULTUS_NAMESPACE, type MultusApiView } from './multus-api-view.js';

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

/** Multus's side of the node: its confDir, and what the agent read from the API. */
export interface MultusContext {
  readonly listing?: CniListing;
  readonly api?: MultusApiView;
}

/**
 * Multus's rule for the primary network, over plain data: `clusterNetwork` (a file path, read by
 * its base name in the configuration directory, or a name: a NetworkAttachmentDefinition in
 * `multusNamespace`, else a file carrying that network name) wins; else thin Multus's inline
 * `delegates[0]`; else (the thick shim) the first file of the auto-config directory, the
 * runtime's directory in upstream's daemon-config, other than Multus's own.
 */
export function multusDelegate(
  network: LoadedNetwork,
  listing: CniListing,
  candidates: readonly string[],
  libcni: Libcni,
  multus: MultusContext = {},
): MultusDelegate {
  const multusFile = network.file;
  const raw = network.list.plugins[0]?.raw ?? {};
  const clusterNetwork = stringField(raw, 'clusterNetwork');
  if (clusterNetwork?.includes('/')) {
    const base = clusterNetwork.slice(clusterNetwork.lastIndexOf('/') + 1);
    return fromFile(multusFile, base, listing, libcni, `clusterNetwork ${clusterNetwork}`);
  }
  if (clusterNetwork !== undefined) {
    const namespace = stringField(raw, 'multusNamespace') ?? DEFAULT_MULTUS_NAMESPACE;
    return byNetworkName(multusFile, { name: clusterNetwork, namespace }, listing, libcni, multus);
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

/** The namespace Multus reads its own definitions from (`multusNamespace`, else its default). */
export function multusNamespaceOf(network: LoadedNetwork): string {
  return stringField(network.list.plugins[0]?.raw ?? {}, 'multusNamespace') ?? DEFAULT_MULTUS_NAMESPACE;
}

/** The definition a Multus file's `clusterNetwork` names, for the API reader. */
export function clusterNetworkDefinition(network: LoadedNetwork): { namespace: string; name: string } | undefined {
  if (!isMultus(network)) return undefined;
  const raw = network.list.plugins[0]?.raw ?? {};
  const name = stringField(raw, 'clusterNetwork');
  if (name === undefined || name.includes('/')) return undefined;
  return { namespace: stringField(raw, 'multusNamespace') ?? DEFAULT_MULTUS_NAMESPACE, name };
}

/**
 * getNetDelegate for a name (multus-cni v4.2.2 pkg/k8sclient): the NetworkAttachmentDefinition
 * of that name in multusNamespace first; on any failure to get it, the file carrying that
 * network name in Multus's confDir. The runtime's directory is searched last, as before the
 * definition could be read (a Multus whose `confDir` is that directory).
 */
function byNetworkName(
  multusFile: string,
  target: { readonly name: string; readonly namespace: string },
  listing: CniListing,
  libcni: Libcni,
  multus: MultusContext,
): MultusDelegate {
  const key = definitionKey(target.namespace, target.name);
  const read = multus.api?.definitions.get(key);
  if (read?.state === 'found') {
    const chain = definitionChain(read.definition, multus.listing, libcni, 'eth0');
    return chain.ok
      ? { ok: true, multusFile, inline: false, network: chain.network }
      : missing(multusFile, key, `${multusFile} names clusterNetwork ${target.name}: ${chain.message}`);
  }
  const inMultusDir = networkFromConfDir(target.name, multus.listing, libcni, 'eth0');
  if (inMultusDir.ok) return { ok: true, multusFile, inline: false, network: inMultusDir.network };
  const named = confFiles(listing.entries).find((entry) => {
    const load = loadConfigFile(entry, libcni);
    return load.ok && load.list.name === target.name && !isMultusFile(entry.name, listing, libcni);
  });
  if (named) return fromFile(multusFile, named.name, listing, libcni, `clusterNetwork ${target.name}`);
  return missing(
    multusFile,
    multus.api ? key : target.name,
    `${multusFile} names clusterNetwork ${target.name}: ${definitionAnswer(key, read, multus.api !== undefined)}, and no file of ${listing.dir}${multus.listing ? ` or ${multus.listing.dir}` : ''} carries a network of that name`,
  );
}

function definitionAnswer(key: string, read: DefinitionRead | undefined, asked: boolean): string {
  if (!asked) return 'a NetworkAttachmentDefinition is not visible from the node (the node agent reads it)';
  if (read?.state === 'unreadable') return `NetworkAttachmentDefinition ${key} cannot be read (${read.message})`;
  return `no NetworkAttachmentDefinition ${key} exists`;
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
