import { scalarText, type Plain } from './plain.js';

/**
 * Which pods Istio ambient captures, by its defaults: istio-cni's PodRedirectionEnabled (1.22 to
 * 1.26, cni/pkg/util/podutil.go) and, from 1.27, the chart's default
 * cni.ambient.enablementSelectors (pod label `ambient`; or namespace label `ambient` with the pod
 * label not `none`), which say the same. Pinned in test/fixtures/meshes/facts/istio-ambient.json.
 */
export const AMBIENT_ENROLMENT = {
  /** pkg/config/constants DataplaneModeLabel: on the namespace or the pod. */
  label: 'istio.io/dataplane-mode',
  ambient: 'ambient',
  /** DataplaneModeNone: the pod's own label opts it out, whatever its namespace says. */
  none: 'none',
  /**
   * istio-cni's podHasSidecar, its only test for a sidecar: a pod Istio's injector injected (which
   * writes this) is never captured. An `istio-proxy` container without it is captured all the same,
   * so it gets the validator too: excluding it would leave a captured pod unguarded.
   */
  sidecarStatusAnnotation: 'sidecar.istio.io/status',
} as const;

/** What ambient's selection reads of one pod. */
export interface AmbientPodFacts {
  readonly metadata: Plain | undefined;
  readonly spec: Plain;
}

const field = (metadata: Plain | undefined, where: 'labels' | 'annotations', key: string): string | undefined => {
  const map = metadata?.[where];
  const value = typeof map === 'object' && map !== null ? (map as Plain)[key] : undefined;
  return value === undefined || value === null ? undefined : scalarText(value);
};

/** The pod's own `istio.io/dataplane-mode` label, if it has one. */
const podDataplaneMode = (metadata: Plain | undefined): string | undefined =>
  field(metadata, 'labels', AMBIENT_ENROLMENT.label);

/**
 * Why ambient does not capture this pod even though its namespace or its label selects it, or
 * undefined when it does: a validator there would fail at every start, since no one redirects.
 * hostNetwork pods are excluded from 1.23 (and on the default branch); their rules would be the node's.
 */
export function ambientExclusion(pod: AmbientPodFacts): string | undefined {
  const { label, none, sidecarStatusAnnotation } = AMBIENT_ENROLMENT;
  if (podDataplaneMode(pod.metadata) === none) return `its label ${label}=${none} opts it out of ambient`;
  if (field(pod.metadata, 'annotations', sidecarStatusAnnotation) !== undefined)
    return `it carries ${sidecarStatusAnnotation}: Istio injected a sidecar, and ambient never captures a sidecar pod`;
  if (pod.spec.hostNetwork === true) return 'hostNetwork: true; ambient captures no pod in the node network';
  return undefined;
}
