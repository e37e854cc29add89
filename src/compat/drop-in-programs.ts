/** Which mesh's validator a drop-in argv stands for. */
export type CompatMode = 'linkerd' | 'istio';

/** The path Linkerd's injector puts in `command:`; the image provides it (a shim that passes the name below first). */
export const LINKERD_VALIDATOR_PATH = '/usr/lib/linkerd/linkerd2-network-validator';
export const LINKERD_VALIDATOR_NAME = 'linkerd2-network-validator';
/** Istio's istio-validation args start with this subcommand of pilot-agent. */
export const ISTIO_IPTABLES_NAME = 'istio-iptables';

/**
 * The one definition of the drop-in program names, matched exactly: a name that only resembles
 * one (`istio-iptables.sh`, `/usr/lib/linkerd/foo`) is not a drop-in and is refused at once.
 */
const PROGRAMS: ReadonlyMap<string, CompatMode> = new Map([
  [LINKERD_VALIDATOR_PATH, 'linkerd'],
  [LINKERD_VALIDATOR_NAME, 'linkerd'],
  [ISTIO_IPTABLES_NAME, 'istio'],
]);

export function dropInProgram(word: string): CompatMode | undefined {
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
