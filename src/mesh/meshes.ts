import { GENERIC } from './generic.js';
import { ISTIO } from './istio.js';
import { ISTIO_AMBIENT } from './istio-ambient.js';
import { KUMA } from './kuma.js';
import { LINKERD } from './linkerd.js';
import type { CapturedPods, DropIn, MeshIdentity } from './mesh-identity.js';

/**
 * Every mesh Interlock knows, one line each, in the order help, docs and lookups list them
 * (the first whose admission selector matches a pod wins).
 */
const IDENTITIES = [LINKERD, ISTIO, ISTIO_AMBIENT, KUMA, GENERIC] as const satisfies readonly MeshIdentity[];

/** Which mesh: the one type for it, everywhere (`--mesh`, presets, containers, drop-ins). */
export type Mesh = (typeof IDENTITIES)[number]['name'];

export const MESHES: readonly Mesh[] = IDENTITIES.map((identity) => identity.name);

const BY_NAME: ReadonlyMap<Mesh, MeshIdentity> = new Map(IDENTITIES.map((identity) => [identity.name, identity]));

export function meshIdentity(mesh: Mesh): MeshIdentity {
  const identity = BY_NAME.get(mesh);
  if (!identity) throw new Error(`no mesh named ${String(mesh)}`);
  return identity;
}

/** The meshes, with their names, in the registry's order. */
export function meshIdentities(): ReadonlyArray<MeshIdentity & { readonly name: Mesh }> {
  return IDENTITIES;
}

/** The meshes Interlock stands in for as a drop-in, with their drop-in. */
export function dropInMeshes(): ReadonlyArray<{ readonly mesh: Mesh; readonly dropIn: DropIn }> {
  return IDENTITIES.flatMap((identity) =>
    identity.dropIn === undefined ? [] : [{ mesh: identity.name, dropIn: identity.dropIn }],
  );
}

/** The mesh whose injector names a container so (its validator, proxy or rules writer); generic names none. */
export function meshOfContainer(name: string): Mesh | undefined {
  // Never generic: `interlock` is Interlock's own name, any mesh's validator may carry it.
  return IDENTITIES.find(
    (identity) =>
      identity.name !== GENERIC.name &&
      ([identity.containers.validator, identity.containers.proxy, identity.containers.rulesWriter] as const).some(
        (container) => container === name,
      ),
  )?.name;
}

/** `linkerd 95, istio 126, generic 97`: each mesh's failure code, as help and docs list them. */
export function failureCodesText(): string {
  return IDENTITIES.map((identity) => `${identity.name} ${identity.failureExitCode}`).join(', ');
}

/** The namespaces the meshes' control planes are installed in by default. */
export function controlPlaneNamespaces(): readonly string[] {
  return IDENTITIES.flatMap((identity) =>
    'controlPlaneNamespace' in identity ? [identity.controlPlaneNamespace] : [],
  );
}

/**
 * Where the meshes run what a pod's start depends on: their control planes and CNI plugins, by
 * default (a failurePolicy Fail webhook must not select them: it would hold up their own repair).
 */
export function meshInfrastructureNamespaces(): readonly string[] {
  return [
    ...new Set(
      IDENTITIES.flatMap((identity) => [
        ...('controlPlaneNamespace' in identity ? [identity.controlPlaneNamespace] : []),
        ...('cniInstall' in identity ? [identity.cniInstall.namespace] : []),
      ]),
    ),
  ];
}

/** Whether the mesh's preset names its proxy's redirect ports; generic's must come from flags. */
export function hasOwnPorts(mesh: Mesh): boolean {
  const { capture } = meshIdentity(mesh);
  return capture.inboundPort !== 0 && capture.outboundPort !== 0;
}

/** `linkerd, istio or generic`: the meshes as a sentence lists them. */
export function meshNamesText(): string {
  return `${MESHES.slice(0, -1).join(', ')} or ${MESHES.at(-1) ?? ''}`;
}

/**
 * The mesh whose dataplane captures pods without an injector (Istio ambient), and which pods: the
 * webhook's ambient path adds Interlock's validator to those. Undefined when no mesh does.
 */
export function capturingMesh(): { readonly mesh: Mesh; readonly capturedPods: CapturedPods } | undefined {
  for (const identity of IDENTITIES)
    if (identity.capturedPods !== undefined) return { mesh: identity.name, capturedPods: identity.capturedPods };
  return undefined;
}

/**
 * `linkerd 4143, istio 15006`: a preset figure of each sidecar mesh (the meshes with an injector
 * of their own), as help texts cite them; a mesh without the figure is left out.
 */
export function presetFiguresText(
  figure: (capture: MeshIdentity['capture']) => string | undefined,
  separator = ', ',
): string {
  return IDENTITIES.flatMap((identity) => {
    const value = identity.admission === undefined ? undefined : figure(identity.capture);
    return value === undefined ? [] : [`${identity.name} ${value}`];
  }).join(separator);
}
