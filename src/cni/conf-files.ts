import type { CniEntry } from './cni-listing.js';

/** The extensions both runtimes pass to libcni's ConfFiles (go-cni loadFromConfDir, ocicni loadNetworks). */
export const CONFIG_EXTENSIONS = ['.conf', '.conflist', '.json'] as const;

/**
 * Go's filepath.Ext: the suffix from the final dot of the name, or "" without a dot. The match is
 * exact and case-sensitive, so `10-x.CONF` and `10-x.conf.bak` are not configurations, while a
 * file named just `.conf` is.
 */
export function goExtension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot);
}

/** libcni ConfFiles: non-directory entries whose extension is one of `extensions`. */
export function confFiles(entries: readonly CniEntry[], extensions: readonly string[] = CONFIG_EXTENSIONS): CniEntry[] {
  return entries.filter((entry) => entry.kind !== 'directory' && extensions.includes(goExtension(entry.name)));
}

/**
 * Go's sort.Strings over the joined paths: byte order of the UTF-8 names (the directory prefix
 * is the same for all). Not JavaScript's default sort, which compares UTF-16 code units.
 */
export function goSortByName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => Buffer.compare(Buffer.from(a.name, 'utf8'), Buffer.from(b.name, 'utf8')));
}
