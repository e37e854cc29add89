import { meshIdentity, type Mesh } from '../mesh/meshes.js';

import { scalarText, type Plain } from './plain.js';

/**
 * validate flags for the pod's mesh annotations (its module's table, src/mesh/: what the mesh's
 * injector or CNI plugin turns into exclusions), in the table's order; flags already in `args` win.
 * Only used where the mesh's own rendered argv does not already carry them: Linkerd's never does.
 */
export function annotationFlags(mesh: Mesh, metadata: Plain | undefined, args: readonly string[]): string[] {
  const annotations = metadata?.annotations;
  if (typeof annotations !== 'object' || annotations === null) return [];
  const given = new Set(args.map((arg) => arg.split('=')[0]));
  const out: string[] = [];
  const identity = meshIdentity(mesh);
  for (const [annotation, flag] of Object.entries(identity.annotationFlags)) {
    const value = (annotations as Plain)[annotation];
    if (value === undefined || value === null || given.has(flag)) continue;
    out.push(`${flag}=${scalarText(value).replace(/\s+/g, '')}`);
  }
  for (const { annotation, value, flag } of identity.annotationSwitches)
    if (scalarText((annotations as Plain)[annotation]) === value && !given.has(flag)) out.push(flag);
  return out;
}
