/**
 * What a runtime sees in a CNI configuration directory: every entry's name and, for the files a
 * runtime would read, their text. Plain data, so the runtime models are pure functions of it.
 */
export interface CniEntry {
  readonly name: string;
  /**
   * `directory` only for a real directory: libcni lists entries without following symlinks, so a
   * symlink (to anything) counts as a file and is read through.
   */
  readonly kind: 'file' | 'directory';
  /** The file's text, when it was read. */
  readonly text?: string;
  /** Why reading it failed (EISDIR for a symlink to a directory, ENOENT when it vanished...). */
  readonly readError?: string;
}

export interface CniListing {
  readonly dir: string;
  readonly entries: readonly CniEntry[];
  /**
   * CRI-O (libcni 1.3) also loads plugin configurations from `<dir>/<network name>/*.conf` for a
   * conflist that does not set loadOnlyInlinedPlugins: those subdirectories' entries, by name.
   */
  readonly subdirectories?: Readonly<Record<string, readonly CniEntry[]>>;
}
