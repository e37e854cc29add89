import type { Family } from '../../addr/ip.js';
import { arr, obj, podIdentityOf, str, type Json, type PodIdentity } from '../pod-identity.js';
import { capturingMesh, meshIdentities, meshOfContainer, type Mesh } from '../../mesh/meshes.js';

/** The mesh that captures pods by itself, with no sidecar to see (Istio ambient), from the registry. */
const CAPTURING = capturingMesh();
export const AMBIENT: Mesh | undefined = CAPTURING?.mesh;

/** How a pod is meshed: a sidecar mesh of the registry, or the capturing one (the key of expectations.ts). */
export type CaptureMode = Mesh;

/**
 * What the re-check keeps of a pod of this node: identity, owner (for `--recheck-action delete`),
 * metadata the mesh's CNI plugin reads, and whether the pod's own metadata asks for ambient.
 * Reduced on arrival, so 110 pods stay small.
 */
export interface RecheckPod extends PodIdentity {
  readonly running: boolean;
  /** A sidecar mesh by its containers, or undefined (then ambient may still apply, by labels). */
  readonly sidecar: Mesh | undefined;
  readonly annotations: ReadonlyMap<string, string>;
  readonly labels: ReadonlyMap<string, string>;
  readonly families: readonly Family[];
}

/** Only string entries, at most this many: metadata is the pod author's and is kept bounded. */
const MAX_ENTRIES = 256;
function stringMap(value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, item] of Object.entries(obj(value)).slice(0, MAX_ENTRIES))
    if (typeof item === 'string' && item.length <= 4096) out.set(key, item);
  return out;
}

/**
 * The sidecar mesh by the containers its injector adds (validator, proxy or rules writer;
 * Interlock's drop-ins carry the mesh's names), else by the annotation its injector leaves.
 */
function sidecarOf(spec: Json, annotations: ReadonlyMap<string, string>): RecheckPod['sidecar'] {
  const names = [...arr(spec.initContainers), ...arr(spec.containers)].map((entry) => str(obj(entry).name));
  const meshes = new Set(names.flatMap((name) => meshOfContainer(name) ?? []));
  if (meshes.size === 0) {
    const injected = meshIdentities().filter((identity) =>
      (identity.admission?.injectedAnnotations ?? []).some((key) => annotations.has(key)),
    );
    return injected.length === 1 ? injected[0]!.name : undefined;
  }
  // Both meshes' containers in one pod: no single expectation fits; treated as not meshed by a sidecar.
  return meshes.size === 1 ? [...meshes][0] : undefined;
}

function familiesOf(status: Json): Family[] {
  const ips = [str(status.podIP), ...arr(status.podIPs).map((entry) => str(obj(entry).ip))].filter(Boolean);
  const found = new Set<Family>(ips.map((ip) => (ip.includes(':') ? 'ipv6' : 'ipv4')));
  return (['ipv4', 'ipv6'] as const).filter((family) => found.has(family));
}

/** The pod as the re-check keeps it; undefined for a pod that is not a pod object or shares the host's network. */
export function recheckPodOf(pod: unknown): RecheckPod | undefined {
  const root = obj(pod);
  const metadata = obj(root.metadata);
  const spec = obj(root.spec);
  const status = obj(root.status);
  const name = str(metadata.name);
  const namespace = str(metadata.namespace);
  const uid = str(metadata.uid);
  if (!name || !namespace || !uid || spec.hostNetwork === true) return undefined;
  const annotations = stringMap(metadata.annotations);
  return {
    ...podIdentityOf(metadata, spec),
    running: str(status.phase) === 'Running',
    sidecar: sidecarOf(spec, annotations),
    annotations,
    labels: stringMap(metadata.labels),
    families: familiesOf(status),
  };
}

/** The namespace metadata the re-check reads: ambient's label, Linkerd's fallback annotations. */
export interface NamespaceMeta {
  readonly labels: ReadonlyMap<string, string>;
  readonly annotations: ReadonlyMap<string, string>;
}

export function namespaceMetaOf(namespace: unknown): NamespaceMeta {
  const metadata = obj(obj(namespace).metadata);
  return { labels: stringMap(metadata.labels), annotations: stringMap(metadata.annotations) };
}

/**
 * How the pod is meshed, or undefined when it is not. A sidecar wins (istio-cni skips ambient for
 * a pod with a sidecar). Ambient: its label `on` the pod or its namespace (the pod's `off` opts
 * out), or the annotation istio-cni writes once it captured the pod (src/mesh/istio-ambient.ts).
 * Either only says the pod should be captured: the check inside its namespace is the proof.
 */
export function captureModeOf(pod: RecheckPod, namespace: NamespaceMeta | undefined): CaptureMode | undefined {
  if (pod.sidecar) return pod.sidecar;
  if (!CAPTURING) return undefined;
  const { label, on, off, enrolledAnnotation, enrolledValue } = CAPTURING.capturedPods;
  if (pod.annotations.get(enrolledAnnotation) === enrolledValue) return CAPTURING.mesh;
  const own = pod.labels.get(label);
  if (own === off) return undefined;
  if (own === on || namespace?.labels.get(label) === on) return CAPTURING.mesh;
  return undefined;
}

/**
 * Whether the pod can be meshed at all, from its own object: a sidecar, or (when a capturing mesh
 * exists) no opt-out on the pod, since ambient may come from its namespace's label, read per sweep.
 */
export function mayBeMeshed(pod: RecheckPod): boolean {
  if (pod.sidecar) return true;
  if (!CAPTURING) return false;
  return pod.labels.get(CAPTURING.capturedPods.label) !== CAPTURING.capturedPods.off;
}
