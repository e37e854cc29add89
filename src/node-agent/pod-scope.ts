import { podViewOf, type PodView } from './pod-view.js';

/** Which pods the agent looks at: its node's, with the validator container, in its namespaces. */
export interface PodScope {
  readonly node: string;
  readonly container: string;
  /** undefined: every namespace. */
  readonly namespaces?: readonly string[];
}

/**
 * The pod's view, or undefined when it lacks the validator, is in a namespace not watched, or is
 * not on this node: the watch's selector is the server's promise, not a proof.
 */
export function scopedViewOf(pod: unknown, scope: PodScope): PodView | undefined {
  const view = podViewOf(pod, scope.container);
  const { namespaces } = scope;
  if (namespaces && view && !namespaces.includes(view.namespace)) return undefined;
  return view && view.nodeName === scope.node ? view : undefined;
}
