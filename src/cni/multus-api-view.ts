import type { DefinitionRead } from './attachment-definition.js';
import type { AttachmentPod } from './attachment-pod.js';
import { parseNetworkSelections, type NetworkSelection } from './network-selection.js';

/**
 * What the node agent read from the API for Multus, as plain data: the definitions the audit
 * needs, by `namespace/name`, and the meshed pods of the node (when a non-chained mesh plugin
 * made them matter). The audit stays a pure function of it.
 */
export interface MultusApiView {
  readonly definitions: ReadonlyMap<string, DefinitionRead>;
  readonly pods?:
    { readonly ok: true; readonly pods: readonly AttachmentPod[] } | { readonly ok: false; readonly message: string };
}

/** Multus's own default for `multusNamespace` (multus-cni v4.2.2 pkg/types/conf.go). */
export const DEFAULT_MULTUS_NAMESPACE = 'kube-system';

/** The API reads the audit takes through: the only impure part, passed in by the composition root. */
export interface MultusApiReader {
  readonly definition: (namespace: string, name: string) => Promise<DefinitionRead>;
  readonly podsOnNode: () => Promise<
    { readonly ok: true; readonly pods: readonly unknown[] } | { readonly ok: false; readonly message: string }
  >;
}

/** The definitions a pod's annotation names, in the order Multus reads them. */
export function podDefinitions(pod: AttachmentPod): readonly NetworkSelection[] {
  if (pod.networks === undefined) return [];
  const parsed = parseNetworkSelections(pod.networks, pod.namespace);
  return parsed.ok ? parsed.selections : [];
}
