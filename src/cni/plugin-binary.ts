import { effectiveCniVersion } from './cni-version.js';

/**
 * What the node's binary directories say about one plugin type: where libcni's FindInPath finds
 * it (the first regular file named after the type in the directories, in order; FindInPath does
 * not look at the mode), whether it may be executed, and its answer to CNI_COMMAND=VERSION.
 */
export interface PluginBinary {
  readonly type: string;
  /** Absent when no directory holds a regular file of that name. */
  readonly path?: string;
  readonly executable: boolean;
  /** The versions its VERSION answer lists; absent when it was not asked or did not answer. */
  readonly supportedVersions?: readonly string[];
  /** Why the VERSION query gave no answer (timeout, exit status, not JSON...). */
  readonly versionError?: string;
}

export type PluginInventory = ReadonlyMap<string, PluginBinary>;

export type PluginProblem =
  | { readonly kind: 'invalid-name'; readonly message: string }
  | { readonly kind: 'missing'; readonly message: string }
  | { readonly kind: 'not-executable'; readonly message: string }
  | { readonly kind: 'no-version-answer'; readonly message: string }
  | { readonly kind: 'version-unsupported'; readonly message: string; readonly supported: readonly string[] };

/** What stops a runtime from running `type` at `listVersion`, or undefined when nothing does. */
export function pluginProblem(
  type: string,
  listVersion: string,
  inventory: PluginInventory,
  binDirs: readonly string[],
): PluginProblem | undefined {
  if (type.includes('/'))
    return {
      kind: 'invalid-name',
      message: `plugin type ${JSON.stringify(type)} contains "/", which libcni refuses ("invalid plugin name")`,
    };
  const binary = inventory.get(type);
  if (!binary?.path) return { kind: 'missing', message: `no plugin binary "${type}" in ${binDirs.join(', ')}` };
  if (!binary.executable) return { kind: 'not-executable', message: `${binary.path} is not executable` };
  if (!binary.supportedVersions)
    return {
      kind: 'no-version-answer',
      message: `${binary.path} did not answer CNI_COMMAND=VERSION (${binary.versionError ?? 'not asked'})`,
    };
  const version = effectiveCniVersion(listVersion);
  if (!binary.supportedVersions.includes(version)) {
    return {
      kind: 'version-unsupported',
      supported: binary.supportedVersions,
      message: `plugin "${type}" supports CNI versions ${binary.supportedVersions.join(', ') || '(none)'}, not ${version}${listVersion === '' ? ' (no cniVersion means 0.1.0)' : ''}`,
    };
  }
  return undefined;
}
