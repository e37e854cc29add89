import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import { confListFromValue, wrappedConfFromValue, type ConfList, type Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import type { LoadedNetwork } from './runtime-load.js';
import { definitionChain, definitionKey, networkFromConfDir, type DefinitionRead } from './attachment-definition.js';
import { DEFAULT_MULTUS_NAMESPACE, type MultusApiView } from './multus-api-view.js';

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
  const thin = network.list.plugins[0]?.type === 'multus';
  // Thin Multus resolves clusterNetwork through its API client only, and with it set it reads no
  // delegates (pkg/types/conf.go LoadNetConf, pkg/k8sclient GetDefaultNetworks, v4.2.2).
  if (clusterNetwork !== undefined && thin && stringField(raw, 'kubeconfig') === undefined)
    return missing(
      multusFile,
      clusterNetwork,
      `${multusFile} names clusterNetwork ${clusterNetwork} but no kubeconfig: thin Multus resolves clusterNetwork only with one, and then ignores its delegates`,
    );
  if (clusterNetwork?.includes('/')) {
    const base = clusterNetwork.slice(clusterNetwork.lastIndexOf('/') + 1);
    return fromFile(multusFile, base, listing, libcni, `clusterNetwork ${clusterNetwork}`);
  }
  if (clusterNetwork !== undefined) {
    const namespace = stringField(raw, 'multusNamespace') ?? DEFAULT_MULTUS_NAMESPACE;
    // Thin Multus's confDir is a path of the node: the runtime's directory only when it names it.
    const context = thin ? thinConfDir(raw, listing, multus) : multus;
    return byNetworkName(multusFile, { name: clusterNetwork, namespace }, thin ? undefined : listing, libcni, context);
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
 * network name in Multus's confDir. For the thick shim, whose daemon's confDir the node's file does
 * not say, the runtime's directory (`listing`) is searched last; thin Multus passes none.
 */
function byNetworkName(
  multusFile: string,
  target: { readonly name: string; readonly namespace: string },
  listing: CniListing | undefined,
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
  const named = listing
    ? confFiles(listing.entries).find((entry) => {
        const load = loadConfigFile(entry, libcni);
        return load.ok && load.list.name === target.name && !isMultusFile(entry.name, listing, libcni);
      })
    : undefined;
  if (listing && named) return fromFile(multusFile, named.name, listing, libcni, `clusterNetwork ${target.name}`);
  const dirs = [listing?.dir, multus.listing?.dir].filter((dir): dir is string => dir !== undefined);
  return missing(
    multusFile,
    multus.api ? key : target.name,
    `${multusFile} names clusterNetwork ${target.name}: ${definitionAnswer(key, read, multus.api !== undefined)}, and no file of ${dirs.join(' or ')} carries a network of that name`,
  );
}

/**
 * Thin Multus's confDir (default Multus's own directory) as the audit reads it: the runtime's
 * listing when confDir names that directory (a containerised audit reads the node's directories
 * under a mount prefix, so the listing's path may end with it), Multus's listing when it names
 * that one or is unset; else an empty listing under confDir's own path.
 */
function thinConfDir(
  raw: Readonly<Record<string, unknown>>,
  listing: CniListing,
  multus: MultusContext,
): MultusContext {
  const confDir = (stringField(raw, 'confDir') ?? MULTUS_DEFAULT_CONF_DIR).replace(/\/+$/, '');
  const names = (dir: string) => {
    const trimmed = dir.replace(/\/+$/, '');
    return trimmed === confDir || (confDir.startsWith('/') && trimmed.endsWith(confDir));
  };
  if (names(listing.dir)) return { ...multus, listing };
  if (multus.listing && (names(multus.listing.dir) || confDir === MULTUS_DEFAULT_CONF_DIR)) return multus;
  return { ...multus, listing: { dir: confDir, entries: [] } };
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
