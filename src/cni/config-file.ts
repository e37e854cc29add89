import type { CniEntry } from './cni-listing.js';
import { confFiles, goSortByName } from './conf-files.js';
import { confListFromValue, wrappedConfFromValue, type ConfList, type Libcni } from './conf-list.js';
import { decodeGoJson } from './go-json.js';

/** Why a runtime could not use a configuration file. */
export type FileProblem = 'partial' | 'invalid' | 'unreadable' | 'no-plugins';

export type FileLoad =
  | { readonly ok: true; readonly list: ConfList; readonly wrapped: boolean }
  | { readonly ok: false; readonly error: { readonly kind: FileProblem; readonly message: string } };

const refused = (kind: FileProblem, message: string): FileLoad => ({ ok: false, error: { kind, message } });

/**
 * One configuration file as libcni reads it: a `.conflist` is a list; any other counted extension
 * (`.conf`, `.json`) is a single plugin wrapped into a one-plugin list. For CRI-O (libcni 1.3) a
 * list may take more plugins from `<dir>/<name>/*.conf` and must end up with at least one.
 */
export function loadConfigFile(
  entry: CniEntry,
  libcni: Libcni,
  subdirectories: Readonly<Record<string, readonly CniEntry[]>> = {},
): FileLoad {
  if (entry.text === undefined) return refused('unreadable', `cannot be read (${entry.readError ?? 'not read'})`);
  const json = decodeGoJson(entry.text);
  if (json.kind === 'partial')
    return refused(
      'partial',
      entry.text.trim() === ''
        ? 'is empty (a writer may be mid-write)'
        : 'ends in the middle of its JSON (a writer may be mid-write)',
    );
  if (json.kind === 'invalid') return refused('invalid', `is ${json.message}`);
  if (!entry.name.endsWith('.conflist')) {
    const wrapped = wrappedConfFromValue(json.value);
    return wrapped.ok
      ? { ok: true, list: wrapped.value, wrapped: true }
      : refused('invalid', `is not a plugin configuration: ${wrapped.error}`);
  }
  const parsed = confListFromValue(json.value, libcni);
  if (!parsed.ok) return refused('invalid', `is not a configuration list: ${parsed.error}`);
  if (libcni === '1.1' || parsed.value.loadOnlyInlinedPlugins) return { ok: true, list: parsed.value, wrapped: false };
  return withSubdirectoryPlugins(parsed.value, subdirectories[parsed.value.name] ?? []);
}

/** libcni 1.3 NetworkPluginConfsFromFiles: `<dir>/<name>/*.conf`, each a single plugin. */
function withSubdirectoryPlugins(list: ConfList, entries: readonly CniEntry[]): FileLoad {
  const plugins = [...list.plugins];
  for (const entry of goSortByName(confFiles(entries, ['.conf']))) {
    const load = loadConfigFile({ ...entry, name: `${list.name}/${entry.name}` }, '1.3');
    if (!load.ok)
      return refused(
        load.error.kind,
        `takes plugins from ${list.name}/, and ${entry.name} there ${load.error.message}`,
      );
    plugins.push(...load.list.plugins);
  }
  if (plugins.length === 0)
    return refused('no-plugins', 'has no plugins (no "plugins" list and no plugin files in its subdirectory)');
  return { ok: true, list: { ...list, plugins }, wrapped: false };
}
