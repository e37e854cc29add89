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
import { NETWORKS_ANNOTATION, parseNetworkSelections, type NetworkSelection } from './network-selection.js';
import type { LoadedNetwork } from './runtime-load.js';

interface Judged {
  readonly meshed: boolean;
  /** Why a selection gives no mesh plugin; `unread` when only the API's silence stands in the way. */
  readonly problem: string;
  readonly unread: boolean;
}

/**
 * A non-chained mesh plugin runs for a pod only as an attachment the pod requests: each meshed
 * pod of the node must name, in its `k8s.v1.cni.cncf.io/networks` annotation, a
 * NetworkAttachmentDefinition whose chain carries the mesh plugin. A pod that does not, or whose
 * definition is missing or lacks the plugin, was (or will be, on its next sandbox) set up
 * without the mesh's rules: PodAttachmentMissing, naming the pod, the annotation and the definition.
 */
export function podAttachmentFindings(
  api: MultusApiView,
  attachment: LoadedNetwork,
  meshPlugin: string,
  multus: CniListing | undefined,
  libcni: Libcni,
): CniFinding[] {
  if (!api.pods) return [];
  if (!api.pods.ok)
    return [podsUnlisted(api.pods.message, `whether each meshed pod requests ${meshPlugin}'s attachment`)];
  const findings: CniFinding[] = [];
  for (const pod of api.pods.pods) {
    const finding = podFinding(pod, { api, attachment, meshPlugin, multus, libcni });
    if (finding) findings.push(finding);
  }
  return findings;
}

interface Context extends DefinitionContext {
  readonly attachment: LoadedNetwork;
}

function podFinding(pod: AttachmentPod, context: Context): CniFinding | undefined {
  const who = `meshed pod ${pod.namespace}/${pod.name}`;
  const mesh = `${context.meshPlugin} (network "${context.attachment.list.name}", ${context.attachment.file})`;
  const unmeshed = `Multus never runs ${context.meshPlugin} for it: the pod has no mesh rules (unmeshed)`;
  if (pod.networks === undefined)
    return attachmentMissing(`${who} has no ${NETWORKS_ANNOTATION} annotation requesting ${mesh}: ${unmeshed}`);
  const parsed = parseNetworkSelections(pod.networks, pod.namespace);
  const annotation = `${NETWORKS_ANNOTATION}: ${JSON.stringify(pod.networks)}`;
  if (!parsed.ok)
    return attachmentMissing(
      `${who} has ${annotation}, which Multus refuses (${parsed.message}): every sandbox of the pod fails`,
    );
  const judged = parsed.selections.map((selection) => judge(selection, context));
  if (judged.some((item) => item.meshed)) return undefined;
  const problems = judged.length === 0 ? 'it names none' : judged.map((item) => item.problem).join('; ');
  if (judged.length > 0 && judged.every((item) => item.unread))
    return {
      code: 'AttachmentUnread',
      severity: 'warning',
      message: `${who} has ${annotation}, and whether it gives ${context.meshPlugin} is not known: ${problems}`,
    };
  return attachmentMissing(
    `${who} has ${annotation}, and no attachment it requests carries ${mesh}: ${problems}; ${unmeshed}`,
  );
}

function judge(selection: NetworkSelection, context: Context): Judged {
  return judgedProblem(judgeDefinition(selection, selection.interface ?? 'net1', context), context.meshPlugin);
}

function judgedProblem(judged: DefinitionJudgement, meshPlugin: string): Judged {
  const problem = (text: string): Judged => ({ meshed: false, unread: false, problem: text });
  switch (judged.kind) {
    case 'meshed':
      return { meshed: true, unread: false, problem: '' };
    case 'unread':
      return {
        meshed: false,
        unread: true,
        problem: `NetworkAttachmentDefinition ${judged.key} cannot be read (${judged.message})`,
      };
    case 'absent':
      return problem(`NetworkAttachmentDefinition ${judged.key} does not exist (Multus fails the pod's next sandbox)`);
    case 'broken':
      return problem(judged.message);
    case 'unmeshed':
      return problem(
        `NetworkAttachmentDefinition ${judged.key} gives ${judged.file}, whose chain [${judged.types.join(', ')}] has no ${meshPlugin}`,
      );
  }
}
