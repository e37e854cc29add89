import { definitionKey, type DefinitionRead } from './attachment-definition.js';
import { attachmentPodOf, type AttachmentPod } from './attachment-pod.js';
import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import type { Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import { meshAttachment } from './mesh-attachment.js';
import { podDefinitions, type MultusApiReader, type MultusApiView } from './multus-api-view.js';
import { clusterNetworkDefinition, isMultus, multusNamespaceOf } from './multus-delegate.js';
import { parseNetworkSelections } from './network-selection.js';

/** At most this many definitions per audit, read this many at a time: pods' annotations are the tenants'. */
const MAX_DEFINITIONS = 256;
const CONCURRENCY = 8;

/**
 * The API reads one audit needs, and no more: the definition a Multus file's `clusterNetwork`
 * names, and, only when the mesh plugin runs as an attachment of its own, the node's meshed pods
 * and the definitions their annotations name.
 */
export async function readMultusApi(
  reader: MultusApiReader,
  listing: CniListing,
  multus: CniListing | undefined,
  meshPlugin: string,
  libcni: Libcni,
): Promise<MultusApiView> {
  const keys = new Map<string, { readonly namespace: string; readonly name: string }>();
  const want = (target: { readonly namespace: string; readonly name: string }) =>
    keys.set(definitionKey(target.namespace, target.name), target);
  let multusNamespace: string | undefined;
  for (const entry of confFiles(listing.entries)) {
    const load = loadConfigFile(entry, libcni);
    const network = load.ok ? { file: entry.name, list: load.list, wrapped: load.wrapped, ifName: 'eth0' } : undefined;
    if (network && isMultus(network)) multusNamespace ??= multusNamespaceOf(network);
    const target = network && clusterNetworkDefinition(network);
    if (target) want(target);
  }
  let pods: MultusApiView['pods'];
  // The node's pods are listed at most once per audit (this node's only, by field selector,
  // paged), and only where they matter: the mesh plugin runs as an attachment, or Multus runs at
  // all, so any meshed pod may replace its primary network with `v1.multus-cni.io/default-network`. The
  // definitions they name are deduplicated and capped below.
  if (meshAttachment(multus, meshPlugin, libcni) || multusNamespace !== undefined) {
    const listed = await reader.podsOnNode();
    if (listed.ok) {
      const meshed = listed.pods.flatMap((pod) => attachmentPodOf(pod, meshPlugin) ?? []);
      for (const pod of meshed) for (const target of podDefinitions(pod)) want(target);
      for (const pod of meshed) for (const target of defaultNetworkDefinition(pod, multusNamespace)) want(target);
      pods = { ok: true, pods: meshed };
    } else pods = listed;
  }
  const wanted = [...keys].slice(0, MAX_DEFINITIONS);
  const definitions = new Map<string, DefinitionRead>();
  for (let start = 0; start < wanted.length; start += CONCURRENCY) {
    const batch = wanted.slice(start, start + CONCURRENCY);
    const reads = await Promise.all(batch.map(([, target]) => reader.definition(target.namespace, target.name)));
    batch.forEach(([key], index) =>
      definitions.set(key, reads[index] ?? { state: 'unreadable', message: 'no answer' }),
    );
  }
  return { definitions, ...(pods ? { pods } : {}) };
}

/** The definition a pod's `v1.multus-cni.io/default-network` names, in multusNamespace unless it says (one, or none). */
function defaultNetworkDefinition(
  pod: AttachmentPod,
  multusNamespace: string | undefined,
): readonly { readonly namespace: string; readonly name: string }[] {
  if (pod.defaultNetwork === undefined || multusNamespace === undefined) return [];
  const parsed = parseNetworkSelections(pod.defaultNetwork, multusNamespace);
  return parsed.ok && parsed.selections.length === 1 ? parsed.selections : [];
}
