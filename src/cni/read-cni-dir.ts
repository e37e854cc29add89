import { fileErrorSentence } from '../file/file-error.js';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fail, ok, type Result } from '../reason/result.js';
import type { CniEntry, CniListing } from './cni-listing.js';
import { CONFIG_EXTENSIONS, goExtension } from './conf-files.js';

/** No CNI configuration is this large; a bigger file is reported, not held in memory. */
const MAX_FILE_BYTES = 1 << 20;
/** Bounds on what one audit holds in memory; no node's directory comes near them. */
const MAX_COUNTED_FILES = 2000;
const MAX_TOTAL_BYTES = 64 << 20;

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
    return fail(
      'CniConfigUnreadable',
      `cannot read the CNI configuration directory ${dir}: ${fileErrorSentence(error)}`,
    );
  }
  const counted = dirents.filter(
    (dirent) => !dirent.isDirectory() && extensions.includes(goExtension(dirent.name)),
  ).length;
  if (counted > MAX_COUNTED_FILES)
    return fail(
      'CniConfigTooLarge',
      `${dir} holds ${counted} configuration files; cni-check audits at most ${MAX_COUNTED_FILES}`,
    );
  const entries: CniEntry[] = [];
  let total = 0;
  // One file at a time, so the byte bound holds before anything past it is read.
  for (const dirent of dirents) {
    if (dirent.isDirectory()) entries.push({ name: dirent.name, kind: 'directory' });
    else if (!extensions.includes(goExtension(dirent.name))) entries.push({ name: dirent.name, kind: 'file' });
    else {
      const read = await readText(join(dir, dirent.name));
      total += 'text' in read ? read.text.length : 0;
      if (total > MAX_TOTAL_BYTES)
        return fail(
          'CniConfigTooLarge',
          `${dir} holds more than ${MAX_TOTAL_BYTES} bytes of configuration; cni-check audits at most that`,
        );
      entries.push({ name: dirent.name, kind: 'file', ...read });
    }
  }
  return ok(entries);
}

async function readText(path: string): Promise<{ text: string } | { readError: string }> {
  try {
    // Checked before reading: a huge file is never loaded, and a FIFO or device (through a
    // symlink too) would block or never end. libcni would try to read them; the audit says so.
    const info = await stat(path);
    if (info.isDirectory()) return { readError: fileErrorSentence({ code: 'EISDIR' }) };
    if (!info.isFile())
      return { readError: 'not a regular file (a FIFO, socket or device: the runtime would block or fail reading it)' };
    if (info.size > MAX_FILE_BYTES) return { readError: `larger than ${MAX_FILE_BYTES} bytes, not read` };
    const bytes = await readFile(path);
    if (bytes.length > MAX_FILE_BYTES) return { readError: `larger than ${MAX_FILE_BYTES} bytes, not read` };
    return { text: bytes.toString('utf8') };
  } catch (error) {
    return { readError: fileErrorSentence(error) };
  }
}
