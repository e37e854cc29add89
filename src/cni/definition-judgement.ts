import { definitionChain, definitionKey } from './attachment-definition.js';
import type { CniFinding } from './cni-finding.js';
import type { CniListing } from './cni-listing.js';
import type { Libcni } from './conf-list.js';
import type { MultusApiView } from './multus-api-view.js';
import type { NetworkSelection } from './network-selection.js';

/** What the audit read to judge one NetworkAttachmentDefinition a meshed pod selects. */
export interface DefinitionContext {
  readonly api: MultusApiView;
  readonly meshPlugin: string;
  readonly multus: CniListing | undefined;
  readonly libcni: Libcni;
}

/**
 * One selected definition, judged: its chain carries the mesh plugin, or why it does not.
 * `unread` is the API's silence (a warning, not proof); the others are facts Multus acts on.
 */
export type DefinitionJudgement =
  | { readonly kind: 'meshed' }
  | { readonly kind: 'unread'; readonly key: string; readonly message: string }
  | { readonly kind: 'absent'; readonly key: string }
  | { readonly kind: 'broken'; readonly message: string }
  | { readonly kind: 'unmeshed'; readonly key: string; readonly file: string; readonly types: readonly string[] };

/** Reads the definition `selection` names and follows it to the chain Multus runs on `ifName`. */
export function judgeDefinition(
  selection: NetworkSelection,
  ifName: string,
  context: DefinitionContext,
): DefinitionJudgement {
  const key = definitionKey(selection.namespace, selection.name);
  const read = context.api.definitions.get(key);
  if (read === undefined || read.state === 'unreadable')
    return { kind: 'unread', key, message: read?.message ?? 'not read' };
  if (read.state === 'absent') return { kind: 'absent', key };
  const chain = definitionChain(read.definition, context.multus, context.libcni, ifName);
  if (!chain.ok) return { kind: 'broken', message: chain.message };
  const types = chain.network.list.plugins.map((plugin) => plugin.type);
  if (types.includes(context.meshPlugin)) return { kind: 'meshed' };
  return { kind: 'unmeshed', key, file: chain.network.file, types };
}

/** A meshed pod Multus sets up (or will, on its next sandbox) without the mesh's rules. */
export const attachmentMissing = (message: string): CniFinding => ({
  code: 'PodAttachmentMissing',
  severity: 'error',
  message,
});

/** The node's pods could not be listed, so `question` about each meshed pod stays open. */
export const podsUnlisted = (reason: string, question: string): CniFinding => ({
  code: 'AttachmentUnread',
  severity: 'warning',
  message: `the node's pods cannot be listed (${reason}): ${question} is not known`,
});
