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
  // A later annotation naming the same flag wins (istio.io/reroute-virtual-interfaces over kubevirtInterfaces).
  const byFlag = new Map<string, string>();
  for (const { key, flag, merge } of identity.podAnnotations) {
    const value = (annotations as Plain)[key];
    if (value === undefined || value === null || given.has(flag)) continue;
    const text = scalarText(value).replace(/\s+/g, '');
    const before = byFlag.get(flag);
    byFlag.set(flag, merge === 'append' && before !== undefined ? `${before},${text}` : text);
  }
  for (const [flag, value] of byFlag) out.push(`${flag}=${value}`);
  for (const { annotation, on, flag } of identity.annotationSwitches)
    if (on.includes(scalarText((annotations as Plain)[annotation])) && !given.has(flag)) out.push(flag);
  return out;
}
