import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fail, ok, type Result } from '../reason/result.js';
import type { CniEntry, CniListing } from './cni-listing.js';
import { CONFIG_EXTENSIONS, goExtension } from './conf-files.js';

/** No CNI configuration is this large; a bigger file is reported, not held in memory. */
const MAX_FILE_BYTES = 1 << 20;

export interface ReadCniDirOptions {
  /** Also read `<dir>/<sub>/*.conf` (CRI-O's plugin subdirectories). */
  readonly subdirectories?: boolean;
}

/**
 * Reads a CNI configuration directory the way libcni lists it: entries without following
 * symlinks (a symlink is a file), and the text of every entry with a counted extension.
 */
export async function readCniDir(dir: string, options: ReadCniDirOptions = {}): Promise<Result<CniListing>> {
  const entries = await readEntries(dir, CONFIG_EXTENSIONS);
  if (!entries.ok) return entries;
  if (!options.subdirectories) return ok({ dir, entries: entries.value });
  const subdirectories: Record<string, readonly CniEntry[]> = {};
  for (const entry of entries.value.filter((item) => item.kind === 'directory')) {
    const inner = await readEntries(join(dir, entry.name), ['.conf']);
    if (inner.ok) subdirectories[entry.name] = inner.value;
  }
  return ok({ dir, entries: entries.value, subdirectories });
}

async function readEntries(dir: string, extensions: readonly string[]): Promise<Result<CniEntry[]>> {
  let dirents;
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    return fail('CniConfigUnreadable', `cannot read the CNI configuration directory ${dir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  return ok(
    await Promise.all(
      dirents.map(async (dirent): Promise<CniEntry> => {
        if (dirent.isDirectory()) return { name: dirent.name, kind: 'directory' };
        if (!extensions.includes(goExtension(dirent.name))) return { name: dirent.name, kind: 'file' };
        return { name: dirent.name, kind: 'file', ...(await readText(join(dir, dirent.name))) };
      }),
    ),
  );
}

async function readText(path: string): Promise<{ text: string } | { readError: string }> {
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_FILE_BYTES) return { readError: `larger than ${MAX_FILE_BYTES} bytes, not read` };
    return { text: bytes.toString('utf8') };
  } catch (error) {
    return { readError: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}
