import { DEFAULT_IMAGE } from '../inject/validator-container.js';
import { MESHES } from '../mesh/meshes.js';
import type { InstallSnapshot } from './install-snapshot.js';

/**
 * What installs Interlock where `check` found none of it, with nothing installed to read flags
 * from: the webhook into the namespace checked, with the default image unless `check --image`
 * named one; the node agent's mesh is the operator's choice, named in the comment.
 */
export function notInstalledFix(snapshot: InstallSnapshot): string {
  const image = snapshot.dataPlane?.image ?? DEFAULT_IMAGE;
  const webhook = `interlock manifest --webhook --namespace ${snapshot.webhookNamespace} --image ${image} | kubectl apply -f -`;
  return `${webhook}  # and a node agent per mesh, in ${snapshot.nodeNamespace}: manifest --node-agent --mesh ${MESHES.join('|')} (docs/operator.md)`;
}
