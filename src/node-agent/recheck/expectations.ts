import type { Family } from '../../addr/ip.js';
import { PRESETS, type InterceptionSpec } from '../../config/interception.js';
import { applyPodMetadata } from '../../config/pod-metadata.js';
import { meshIdentity, type Mesh } from '../../mesh/meshes.js';
import type { MeshIdentity } from '../../mesh/mesh-identity.js';
import { AMBIENT, type CaptureMode, type NamespaceMeta, type RecheckPod } from './meshed-pod.js';

/**
 * What a meshed pod's rules must do, as its validator would check them, or why that is not known.
 * `specs` are the configurations the pod may legitimately have (one for a sidecar; a mesh setting
 * the agent cannot see, such as a chart-wide switch, gives one per value): the pod is captured when
 * one of them holds, and lost only when every one of them finds a region escaping.
 */
export type PodExpectation =
  | { readonly kind: 'spec'; readonly specs: readonly InterceptionSpec[]; readonly families: readonly Family[] }
  | { readonly kind: 'unknown'; readonly why: string };

/**
 * A sidecar mesh: its preset with the exclusions its CNI plugin takes from the pod's annotations
 * (applyPodMetadata, the validator's own function), falling back to the namespace's where the
 * plugin does (linkerd-cni; `namespaceAnnotationFallback` in src/mesh/).
 */
function sidecar(mesh: Mesh, pod: RecheckPod, namespace: NamespaceMeta | undefined): PodExpectation {
  if (pod.families.length === 0) return { kind: 'unknown', why: 'the pod has no IP yet, so its families are unknown' };
  const identity = meshIdentity(mesh);
  if (identity.podMetadata === undefined)
    return { kind: 'unknown', why: `the ${mesh} mesh has no preset the agent can check a pod against` };
  const annotations =
    identity.namespaceAnnotationFallback && namespace
      ? new Map([...meshAnnotations(identity, namespace.annotations), ...pod.annotations])
      : pod.annotations;
  const applied = applyPodMetadata(PRESETS[mesh].spec, { annotations, labels: pod.labels }, new Set());
  return { kind: 'spec', specs: [applied.spec], families: pod.families };
}

/** The namespace's annotations under the mesh's own prefixes (`config.linkerd.io/`): the only ones its plugin reads. */
function meshAnnotations(identity: MeshIdentity, annotations: ReadonlyMap<string, string>): [string, string][] {
  const prefixes = new Set(Object.keys(identity.annotationFlags).map((key) => key.slice(0, key.indexOf('/') + 1)));
  return [...annotations].filter(([key]) => prefixes.has(key.slice(0, key.indexOf('/') + 1)));
}

/**
 * The mesh → expectation lookup. Ambient's in-pod rules need their own preset and check (another
 * change adds them): until then an ambient pod is `unknown`, said so, never lost and never healthy.
 */
export function expectationOf(
  mode: CaptureMode,
  pod: RecheckPod,
  namespace: NamespaceMeta | undefined,
): PodExpectation {
  if (mode === AMBIENT)
    return { kind: 'unknown', why: "this build has no check of Istio ambient's in-pod rules; the pod was not judged" };
  return sidecar(mode, pod, namespace);
}
