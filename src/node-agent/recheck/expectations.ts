import type { Family } from '../../addr/ip.js';
import { PRESETS, type InterceptionSpec } from '../../config/interception.js';
import { ambientDnsOverride, applyPodMetadata } from '../../config/pod-metadata.js';
import { ambientAnnotationsRead, type AmbientPodAnnotation } from '../../mesh/istio-ambient.js';
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
 * A mesh: its preset with the exclusions its CNI plugin takes from the pod's annotations
 * (applyPodMetadata, the validator's own function), falling back to the namespace's where the
 * plugin does (linkerd-cni; `namespaceAnnotationFallback` in src/mesh/).
 */
function presetExpectation(
  mesh: Mesh,
  pod: RecheckPod,
  namespace: NamespaceMeta | undefined,
  reads: ReadonlySet<AmbientPodAnnotation>,
): PodExpectation {
  if (pod.families.length === 0) return { kind: 'unknown', why: 'the pod has no IP yet, so its families are unknown' };
  const identity = meshIdentity(mesh);
  if (identity.podMetadata === undefined)
    return { kind: 'unknown', why: `the ${mesh} mesh has no preset the agent can check a pod against` };
  const annotations =
    identity.namespaceAnnotationFallback && namespace
      ? new Map([...meshAnnotations(identity, namespace.annotations), ...pod.annotations])
      : pod.annotations;
  const applied = applyPodMetadata(PRESETS[mesh].spec, { annotations, labels: pod.labels }, new Set(), reads);
  return { kind: 'spec', specs: [applied.spec], families: pod.families };
}

/** The namespace's annotations under the mesh's own prefixes (`config.linkerd.io/`): the only ones its plugin reads. */
function meshAnnotations(identity: MeshIdentity, annotations: ReadonlyMap<string, string>): [string, string][] {
  const prefixes = new Set(identity.podAnnotations.map(({ key }) => key.slice(0, key.indexOf('/') + 1)));
  return [...annotations].filter(([key]) => prefixes.has(key.slice(0, key.indexOf('/') + 1)));
}

/**
 * The configurations of a mesh that captures pods by itself (Istio ambient) that the agent cannot
 * see from the pod: DNS capture is a chart-wide switch (cni.ambient.dnsCapture, on by default from
 * 1.25; the pod's ambient.istio.io/dns-capture overrides it), and istio-cni 1.21 to 1.23 divert inbound by TPROXY in mangle where later tags REDIRECT in
 * nat (test/fixtures/meshes/facts/istio-ambient.json). The pod is captured when any one holds.
 */
function chartVariants(
  spec: InterceptionSpec,
  pod: RecheckPod,
  reads: ReadonlySet<AmbientPodAnnotation>,
): InterceptionSpec[] {
  // The pod's own ambient.istio.io/dns-capture, where istio-cni reads it, wins over the chart's switch: no variant then.
  const overridden = reads.has('dnsCapture') && ambientDnsOverride(pod.annotations) !== undefined;
  const dns = overridden ? [spec] : [spec, { ...spec, dnsCapture: undefined }];
  return [...dns, ...dns.map((variant) => ({ ...variant, tproxy: true }))];
}

/**
 * The mesh → expectation lookup: a sidecar mesh's preset with the pod's exclusions; for a mesh that
 * captures pods by itself, the same, in every chart-wide variant the agent cannot see.
 */
export function expectationOf(
  mode: CaptureMode,
  pod: RecheckPod,
  namespace: NamespaceMeta | undefined,
  reads: ReadonlySet<AmbientPodAnnotation> = ambientAnnotationsRead(),
): PodExpectation {
  const expectation = presetExpectation(mode, pod, namespace, reads);
  if (mode !== AMBIENT || expectation.kind !== 'spec') return expectation;
  return { ...expectation, specs: expectation.specs.flatMap((spec) => chartVariants(spec, pod, reads)) };
}
