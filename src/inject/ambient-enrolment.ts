import type { CapturedPods } from '../mesh/mesh-identity.js';
import { scalarText, type Plain } from './plain.js';

/** What a node dataplane's selection reads of one pod. */
export interface CapturedPodFacts {
  readonly metadata: Plain | undefined;
  readonly spec: Plain;
}

const field = (metadata: Plain | undefined, where: 'labels' | 'annotations', key: string): string | undefined => {
  const map = metadata?.[where];
  const value = typeof map === 'object' && map !== null ? (map as Plain)[key] : undefined;
  return value === undefined || value === null ? undefined : scalarText(value);
};

/**
 * Why the mesh does not capture this pod even though its namespace or its label selects it, or
 * undefined when it does (src/mesh/istio-ambient.ts: the pod's `off` label, a sidecar): a
 * validator there would fail at every start, since no one redirects. hostNetwork pods are
 * excluded too (istio-cni from 1.23 and on the default branch); their rules would be the node's.
 */
export function captureExclusion(selection: CapturedPods, pod: CapturedPodFacts): string | undefined {
  const { label, off, sidecarAnnotation } = selection;
  if (field(pod.metadata, 'labels', label) === off) return `its label ${label}=${off} opts it out`;
  if (field(pod.metadata, 'annotations', sidecarAnnotation) !== undefined)
    return `it carries ${sidecarAnnotation}: a sidecar was injected, and a sidecar pod is never captured`;
  if (pod.spec.hostNetwork === true) return 'hostNetwork: true; no pod in the node network is captured';
  return undefined;
}
