import { definitionChain, definitionKey } from './attachment-definition.js';
import type { AttachmentPod } from './attachment-pod.js';
import type { CniFinding } from './cni-finding.js';
import type { CniListing } from './cni-listing.js';
import type { Libcni } from './conf-list.js';
import type { MultusApiView } from './multus-api-view.js';
import { DEFAULT_NETWORK_ANNOTATION, parseNetworkSelections } from './network-selection.js';

/**
 * Multus's tryLoadK8sPodDefaultNetwork (multus-cni v4.2.2 pkg/k8sclient/k8sclient.go): a pod's
 * `v1.multus-cni.io/default-network` replaces delegates[0], its primary network, with the
 * NetworkAttachmentDefinition it names, looked up in `multusNamespace` when the value gives no
 * namespace (never the pod's). Each meshed pod whose override chain lacks the mesh plugin gets
 * an unmeshed primary network: PodAttachmentMissing, naming the pod, annotation and definition.
 */
export function defaultNetworkFindings(
  api: MultusApiView | undefined,
  meshPlugin: string,
  multusNamespace: string,
  multus: CniListing | undefined,
  libcni: Libcni,
): CniFinding[] {
  if (!api?.pods) return [];
  if (!api.pods.ok)
    return [
      {
        code: 'AttachmentUnread',
        severity: 'warning',
        message: `the node's pods cannot be listed (${api.pods.message}): whether a meshed pod replaces its primary network with ${DEFAULT_NETWORK_ANNOTATION} is not known`,
      },
    ];
  return api.pods.pods.flatMap((pod) => podFinding(pod, { api, meshPlugin, multusNamespace, multus, libcni }) ?? []);
}

interface Context {
  readonly api: MultusApiView;
  readonly meshPlugin: string;
  readonly multusNamespace: string;
  readonly multus: CniListing | undefined;
  readonly libcni: Libcni;
}

function podFinding(pod: AttachmentPod, context: Context): CniFinding | undefined {
  if (pod.defaultNetwork === undefined) return undefined;
  const who = `meshed pod ${pod.namespace}/${pod.name} has ${DEFAULT_NETWORK_ANNOTATION}: ${JSON.stringify(pod.defaultNetwork)}`;
  const parsed = parseNetworkSelections(pod.defaultNetwork, context.multusNamespace);
  if (!parsed.ok) return missing(`${who}, which Multus refuses (${parsed.message}): every sandbox of the pod fails`);
  const [selection, ...more] = parsed.selections;
  if (selection === undefined || more.length > 0)
    return missing(
      `${who}, which names ${parsed.selections.length} networks, not one: Multus fails every sandbox of the pod`,
    );
  const key = definitionKey(selection.namespace, selection.name);
  const read = context.api.definitions.get(key);
  if (read === undefined || read.state === 'unreadable')
    return {
      code: 'AttachmentUnread',
      severity: 'warning',
      message: `${who}; NetworkAttachmentDefinition ${key}, its primary network, cannot be read (${read?.message ?? 'not read'}): whether it chains ${context.meshPlugin} is not known`,
    };
  if (read.state === 'absent')
    return missing(`${who}; NetworkAttachmentDefinition ${key} does not exist: Multus fails the pod's next sandbox`);
  const chain = definitionChain(read.definition, context.multus, context.libcni, 'eth0');
  if (!chain.ok) return missing(`${who}; ${chain.message}`);
  const types = chain.network.list.plugins.map((plugin) => plugin.type);
  if (types.includes(context.meshPlugin)) return undefined;
  return missing(
    `${who}; NetworkAttachmentDefinition ${key} replaces its primary network with ${chain.network.file}, whose chain [${types.join(', ')}] has no ${context.meshPlugin}: the pod has no mesh rules (unmeshed)`,
  );
}

const missing = (message: string): CniFinding => ({ code: 'PodAttachmentMissing', severity: 'error', message });
