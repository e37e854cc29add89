import type { Mesh } from '../config/interception.js';

import { scalarText, type Plain } from './plain.js';

/** What a Namespace in the same input says about its webhooks (labels and annotations). */
export interface NamespaceInjection {
  readonly linkerd: boolean;
  readonly istio: boolean;
}

const text = (map: unknown, key: string): string | undefined => {
  const value = typeof map === 'object' && map !== null ? (map as Plain)[key] : undefined;
  return value === undefined || value === null ? undefined : scalarText(value);
};

/** A Namespace object's injection switches, as each mesh's webhook selects namespaces. */
export function namespaceInjection(metadata: Plain): NamespaceInjection {
  const labels = metadata.labels;
  const annotations = metadata.annotations;
  return {
    linkerd: ['enabled', 'ingress'].includes(text(annotations, 'linkerd.io/inject') ?? ''),
    istio: text(labels, 'istio-injection') === 'enabled' || text(labels, 'istio.io/rev') !== undefined,
  };
}

/**
 * The mesh whose webhook will inject this pod at admission (adding its own validator there), or
 * undefined. Linkerd's proxy injector acts on `linkerd.io/inject: enabled|ingress` (pod, else
 * namespace) and skips a pod that has its proxy; Istio's on `sidecar.istio.io/inject` (label or
 * annotation, `true` opts in, `false` out) or a namespace label, and skips a pod carrying
 * `sidecar.istio.io/status`.
 */
export function admissionMesh(
  metadata: Plain | undefined,
  containerNames: readonly string[],
  namespace: NamespaceInjection | undefined,
): Mesh | undefined {
  const annotations = metadata?.annotations;
  const labels = metadata?.labels;
  const linkerdSwitch = text(annotations, 'linkerd.io/inject');
  const linkerdOn =
    linkerdSwitch === undefined ? namespace?.linkerd === true : ['enabled', 'ingress'].includes(linkerdSwitch);
  if (linkerdOn && !containerNames.includes('linkerd-proxy')) return 'linkerd';
  const istioSwitch = text(labels, 'sidecar.istio.io/inject') ?? text(annotations, 'sidecar.istio.io/inject');
  const istioOn = istioSwitch === undefined ? namespace?.istio === true : istioSwitch === 'true';
  const injected = containerNames.includes('istio-proxy') || text(annotations, 'sidecar.istio.io/status') !== undefined;
  if (istioOn && !injected) return 'istio';
  return undefined;
}
