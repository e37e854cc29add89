import type { AttachmentPod } from './attachment-pod.js';
import type { CniFinding } from './cni-finding.js';
import type { CniListing } from './cni-listing.js';
import type { Libcni } from './conf-list.js';
import {
  attachmentMissing,
  judgeDefinition,
  podsUnlisted,
  type DefinitionContext,
  type DefinitionJudgement,
} from './definition-judgement.js';
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
      podsUnlisted(
        api.pods.message,
        `whether a meshed pod replaces its primary network with ${DEFAULT_NETWORK_ANNOTATION}`,
      ),
    ];
  return api.pods.pods.flatMap((pod) => podFinding(pod, { api, meshPlugin, multusNamespace, multus, libcni }) ?? []);
}

interface Context extends DefinitionContext {
  readonly multusNamespace: string;
}

function podFinding(pod: AttachmentPod, context: Context): CniFinding | undefined {
  if (pod.defaultNetwork === undefined) return undefined;
  const who = `meshed pod ${pod.namespace}/${pod.name} has ${DEFAULT_NETWORK_ANNOTATION}: ${JSON.stringify(pod.defaultNetwork)}`;
  const parsed = parseNetworkSelections(pod.defaultNetwork, context.multusNamespace);
  if (!parsed.ok)
    return attachmentMissing(`${who}, which Multus refuses (${parsed.message}): every sandbox of the pod fails`);
  const [selection, ...more] = parsed.selections;
  if (selection === undefined || more.length > 0)
    return attachmentMissing(
      `${who}, which names ${parsed.selections.length} networks, not one: Multus fails every sandbox of the pod`,
    );
  return judgedFinding(who, judgeDefinition(selection, 'eth0', context), context.meshPlugin);
}

function judgedFinding(who: string, judged: DefinitionJudgement, meshPlugin: string): CniFinding | undefined {
  switch (judged.kind) {
    case 'meshed':
      return undefined;
    case 'unread':
      return {
        code: 'AttachmentUnread',
        severity: 'warning',
        message: `${who}; NetworkAttachmentDefinition ${judged.key}, its primary network, cannot be read (${judged.message}): whether it chains ${meshPlugin} is not known`,
      };
    case 'absent':
      return attachmentMissing(
        `${who}; NetworkAttachmentDefinition ${judged.key} does not exist: Multus fails the pod's next sandbox`,
      );
    case 'broken':
      return attachmentMissing(`${who}; ${judged.message}`);
    case 'unmeshed':
      return attachmentMissing(
        `${who}; NetworkAttachmentDefinition ${judged.key} replaces its primary network with ${judged.file}, whose chain [${judged.types.join(', ')}] has no ${meshPlugin}: the pod has no mesh rules (unmeshed)`,
      );
  }
}
