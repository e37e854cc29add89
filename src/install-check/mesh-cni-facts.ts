import type { MeshCniFacts } from '../mesh/cni-install-facts.js';
import { meshIdentity, type Mesh } from '../mesh/meshes.js';

export type { MeshCniFacts } from '../mesh/cni-install-facts.js';

/** Where the mesh says it runs in CNI mode (its module's `cniInstall`); undefined: not checked. */
export function meshCniFacts(mesh: Mesh): MeshCniFacts | undefined {
  return meshIdentity(mesh).cniInstall;
}
