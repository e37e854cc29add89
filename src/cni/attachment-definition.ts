import type { CniListing } from './cni-listing.js';
import { confFiles, goSortByName } from './conf-files.js';
import { confListFromValue, wrappedConfFromValue, type Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import type { LoadedNetwork } from './runtime-load.js';

/**
 * A NetworkAttachmentDefinition (`k8s.cni.cncf.io/v1`, network-attachment-definition-client
 * v1.7.6, the version multus-cni v4.2.2 builds with): its spec is one string, `config`.
 */
export interface AttachmentDefinition {
  readonly namespace: string;
  readonly name: string;
  /** `spec.config`; empty or absent means "the file of this network name in Multus's confDir". */
  readonly config: string;
}

/** What the API answered for one definition the audit needs. */
export type DefinitionRead =
  | { readonly state: 'found'; readonly definition: AttachmentDefinition }
  | { readonly state: 'absent' }
  | { readonly state: 'unreadable'; readonly message: string };

export const definitionKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export type DefinitionChain =
  { readonly ok: true; readonly network: LoadedNetwork } | { readonly ok: false; readonly message: string };

/**
 * The chain a definition gives, as Multus loads it (utils.GetCNIConfig): a non-empty
 * `spec.config` is a configuration or list (its name defaulted to the definition's); an empty one
 * is the file of the definition's name in Multus's confDir.
 */
export function definitionChain(
  definition: AttachmentDefinition,
  multus: CniListing | undefined,
  libcni: Libcni,
  ifName: string,
): DefinitionChain {
  const label = `NetworkAttachmentDefinition ${definitionKey(definition.namespace, definition.name)}`;
  if (definition.config !== '') return fromSpec(definition, label, libcni, ifName);
  const file = networkFromConfDir(definition.name, multus, libcni, ifName);
  return file.ok ? file : { ok: false, message: `${label} has an empty spec.config, and ${file.message}` };
}

/**
 * utils.GetCNIConfigFromFile: the first file of the directory, in libcni's order, whose network
 * name is `name`; a file that does not load before it fails the lookup, as upstream's does.
 */
export function networkFromConfDir(
  name: string,
  listing: CniListing | undefined,
  libcni: Libcni,
  ifName: string,
): DefinitionChain {
  if (!listing)
    return { ok: false, message: `Multus's confDir, where network "${name}" would be, is not on this node` };
  for (const entry of goSortByName(confFiles(listing.entries))) {
    const load = loadConfigFile(entry, libcni);
    if (!load.ok)
      return {
        ok: false,
        message: `Multus's lookup of network "${name}" stops at ${listing.dir}/${entry.name}, which ${load.error.message}`,
      };
    if (load.list.name === name)
      return {
        ok: true,
        network: { file: `${listing.dir}/${entry.name}`, list: load.list, wrapped: load.wrapped, ifName },
      };
  }
  return { ok: false, message: `no file of ${listing.dir} carries network "${name}"` };
}

function fromSpec(definition: AttachmentDefinition, label: string, libcni: Libcni, ifName: string): DefinitionChain {
  let value: unknown;
  try {
    value = JSON.parse(definition.config);
  } catch (error) {
    return { ok: false, message: `${label}'s spec.config does not parse: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, message: `${label}'s spec.config is not a JSON object` };
  const raw = value as Record<string, unknown>;
  // GetCNIConfigFromSpec: a missing or empty name becomes the definition's.
  const named = raw.name === undefined || raw.name === '' ? { ...raw, name: definition.name } : raw;
  const isList = Object.hasOwn(named, 'plugins');
  const parsed = isList ? confListFromValue(named, libcni) : wrappedConfFromValue(named);
  if (!parsed.ok)
    return { ok: false, message: `${label}'s spec.config is not a network configuration: ${parsed.error}` };
  return {
    ok: true,
    network: { file: `${label} (spec.config)`, list: parsed.value, wrapped: !isList, ifName },
  };
}
