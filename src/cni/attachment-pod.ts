import { meshIdentities, meshIdentity, meshOfContainer } from '../mesh/meshes.js';
import { DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION } from './network-selection.js';

/** A pod of this node that the mesh injected: what the attachment judgment reads of it. */
export interface AttachmentPod {
  readonly namespace: string;
  readonly name: string;
  /** Its `k8s.v1.cni.cncf.io/networks` value; undefined when it has none. */
  readonly networks: string | undefined;
  /** Its `v1.multus-cni.io/default-network` value (replaces its primary network); undefined when none. */
  readonly defaultNetwork?: string;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * A pod as the API lists it, kept when a sidecar mesh whose CNI plugin is `meshPlugin` injected
 * it (its containers, else the annotation its injector leaves) for CNI mode, and it is not
 * finished or on the host's network: Multus sets up no attachment for those.
 */
export function attachmentPodOf(pod: unknown, meshPlugin: string): AttachmentPod | undefined {
  const root = obj(pod);
  const metadata = obj(root.metadata);
  const spec = obj(root.spec);
  const phase = str(obj(root.status).phase);
  const name = str(metadata.name);
  const namespace = str(metadata.namespace);
  if (!name || !namespace || spec.hostNetwork === true || phase === 'Succeeded' || phase === 'Failed') return undefined;
  const annotations = obj(metadata.annotations);
  if (!injectedBy(spec, annotations, meshPlugin) || writesOwnRules(spec, meshPlugin)) return undefined;
  const networks = annotations[NETWORKS_ANNOTATION];
  const primary = annotations[DEFAULT_NETWORK_ANNOTATION];
  return {
    namespace,
    name,
    networks: typeof networks === 'string' ? networks : undefined,
    ...(typeof primary === 'string' ? { defaultNetwork: primary } : {}),
  };
}

/**
 * A pod injected without CNI mode carries the mesh's rules writer (istio-init, kuma-init) as an
 * init container: it captures itself and requests no attachment, which is no finding.
 */
function writesOwnRules(spec: Json, meshPlugin: string): boolean {
  const writers = new Set(
    meshIdentities()
      .filter((identity) => identity.cniPlugin === meshPlugin)
      .flatMap((identity) => identity.containers.rulesWriter ?? []),
  );
  const inits: unknown[] = Array.isArray(spec.initContainers) ? (spec.initContainers as unknown[]) : [];
  return inits.some((container) => writers.has(str(obj(container).name)));
}

function injectedBy(spec: Json, annotations: Json, meshPlugin: string): boolean {
  const containers = [spec.initContainers, spec.containers].flatMap((list): unknown[] =>
    Array.isArray(list) ? (list as unknown[]) : [],
  );
  const byContainer = containers.flatMap((container) => meshOfContainer(str(obj(container).name)) ?? []);
  if (byContainer.some((mesh) => meshIdentity(mesh).cniPlugin === meshPlugin)) return true;
  return meshIdentities().some(
    (identity) =>
      identity.cniPlugin === meshPlugin &&
      (identity.admission?.injectedAnnotations ?? []).some((key) => Object.hasOwn(annotations, key)),
  );
}
