import { definitionKey, type DefinitionRead } from './attachment-definition.js';
import { attachmentPodOf } from './attachment-pod.js';
import type { CniListing } from './cni-listing.js';
import { confFiles } from './conf-files.js';
import type { Libcni } from './conf-list.js';
import { loadConfigFile } from './config-file.js';
import { meshAttachment } from './mesh-attachment.js';
import { podDefinitions, type MultusApiReader, type MultusApiView } from './multus-api-view.js';
import { clusterNetworkDefinition } from './multus-delegate.js';

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
  for (const entry of confFiles(listing.entries)) {
    const load = loadConfigFile(entry, libcni);
    const network = load.ok ? { file: entry.name, list: load.list, wrapped: load.wrapped, ifName: 'eth0' } : undefined;
    const target = network && clusterNetworkDefinition(network);
    if (target) want(target);
  }
  let pods: MultusApiView['pods'];
  if (meshAttachment(multus, meshPlugin, libcni)) {
    const listed = await reader.podsOnNode();
    if (listed.ok) {
      const meshed = listed.pods.flatMap((pod) => attachmentPodOf(pod, meshPlugin) ?? []);
      for (const pod of meshed) for (const target of podDefinitions(pod)) want(target);
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
