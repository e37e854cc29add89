import type { MetadataKey } from '../mesh/mesh-identity.js';
import { meshIdentities, type Mesh } from '../mesh/meshes.js';

import { scalarText, type Plain } from './plain.js';

/** What a Namespace in the same input says about its webhooks (labels and annotations), per mesh. */
export type NamespaceInjection = Readonly<Partial<Record<Mesh, boolean>>>;

const text = (metadata: Plain | undefined, where: MetadataKey): string | undefined => {
  const map = metadata?.[where.in];
  const value = typeof map === 'object' && map !== null ? (map as Plain)[where.key] : undefined;
  return value === undefined || value === null ? undefined : scalarText(value);
};

/** A Namespace object's injection switches, as each mesh's webhook selects namespaces (src/mesh/). */
export function namespaceInjection(metadata: Plain): NamespaceInjection {
  return Object.fromEntries(
    meshIdentities().flatMap(({ name, admission }) =>
      admission === undefined
        ? []
        : [
            [
              name,
              admission.namespaceSwitches.some((selector) => {
                const value = text(metadata, selector);
                return value !== undefined && (selector.values === undefined || selector.values.includes(value));
              }),
            ],
          ],
    ),
  );
}

/**
 * The mesh whose webhook will inject this pod at admission (adding its own validator there), or
 * undefined: the first mesh whose selector (src/mesh/) turns injection on, by the pod's switch or
 * else its namespace's, and whose proxy or injected annotation the pod does not carry yet.
 */
export function admissionMesh(
  metadata: Plain | undefined,
  containerNames: readonly string[],
  namespace: NamespaceInjection | undefined,
): Mesh | undefined {
  return meshIdentities().find(({ name, admission, containers }) => {
    if (admission === undefined) return false;
    const podSwitch = admission.podSwitch.map((where) => text(metadata, where)).find((value) => value !== undefined);
    const on = podSwitch === undefined ? namespace?.[name] === true : admission.switchOn.includes(podSwitch);
    const injected =
      (containers.proxy !== undefined && containerNames.includes(containers.proxy)) ||
      admission.injectedAnnotations.some((key) => text(metadata, { in: 'annotations', key }) !== undefined);
    return on && !injected;
  })?.name;
}
