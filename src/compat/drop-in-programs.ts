import { dropInMeshes, type Mesh } from '../mesh/meshes.js';

/**
 * The one table of the drop-in program names, from each mesh's module (src/mesh/), matched
 * exactly: a name that only resembles one (`istio-iptables.sh`, `/usr/lib/linkerd/foo`) is not a
 * drop-in and is refused at once.
 */
const PROGRAMS: ReadonlyMap<string, Mesh> = new Map(
  dropInMeshes().flatMap(({ mesh, dropIn }) => dropIn.programs.map((program) => [program, mesh] as const)),
);

export function dropInProgram(word: string): Mesh | undefined {
  return PROGRAMS.get(word);
}

/** Words that look like a program name rather than a flag: a path, or one of the names with something added. */
export function looksLikeProgramName(word: string): boolean {
  if (word.startsWith('-') || word === '') return false;
  return word.includes('/') || [...PROGRAMS.keys()].some((name) => word.startsWith(name.split('/').at(-1) ?? name));
}

export function dropInProgramNames(): readonly string[] {
  return [...PROGRAMS.keys()];
}
