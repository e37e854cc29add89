import type { Family } from '../../addr/ip.js';
import { PRESETS, type InterceptionSpec } from '../../config/interception.js';
import { applyPodMetadata } from '../../config/pod-metadata.js';
import type { CaptureMode, NamespaceMeta, RecheckPod } from './meshed-pod.js';

/**
 * What a meshed pod's rules must do, as its validator would check them, or why that is not known.
 * `specs` are the configurations the pod may legitimately have (one for a sidecar; a mesh setting
 * the agent cannot see, such as a chart-wide switch, gives one per value): the pod is captured when
 * one of them holds, and lost only when every one of them finds a region escaping.
 */
export type PodExpectation =
  | { readonly kind: 'spec'; readonly specs: readonly InterceptionSpec[]; readonly families: readonly Family[] }
  | { readonly kind: 'unknown'; readonly why: string };

type ExpectationOf = (pod: RecheckPod, namespace: NamespaceMeta | undefined) => PodExpectation;

/**
 * A sidecar mesh: its preset with the exclusions its CNI plugin takes from the pod's annotations
 * (applyPodMetadata, the validator's own function), Linkerd's falling back to the namespace's
 * (linkerd-cni reads both; test/fixtures/meshes/facts/linkerd-cni-plugin.json).
 */
function sidecar(mesh: 'linkerd' | 'istio'): ExpectationOf {
  return (pod, namespace) => {
    if (pod.families.length === 0)
      return { kind: 'unknown', why: 'the pod has no IP yet, so its families are unknown' };
    const annotations =
      mesh === 'linkerd' && namespace
        ? new Map([...linkerdOnly(namespace.annotations), ...pod.annotations])
        : pod.annotations;
    const applied = applyPodMetadata(PRESETS[mesh].spec, { annotations, labels: pod.labels }, new Set());
    return { kind: 'spec', specs: [applied.spec], families: pod.families };
  };
}

const linkerdOnly = (annotations: ReadonlyMap<string, string>): [string, string][] =>
  [...annotations].filter(([key]) => key.startsWith('config.linkerd.io/'));

/**
 * The mesh → expectation lookup. Ambient's in-pod rules need their own preset and check (another
 * change adds them): until then an ambient pod is `unknown`, said so, never lost and never healthy.
 */
export const EXPECTATIONS: Readonly<Record<CaptureMode, ExpectationOf>> = {
  linkerd: sidecar('linkerd'),
  istio: sidecar('istio'),
  'istio-ambient': () => ({
    kind: 'unknown',
    why: "this build has no check of Istio ambient's in-pod rules; the pod was not judged",
  }),
};
