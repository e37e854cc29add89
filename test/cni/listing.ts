import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CniEntry, CniListing } from '../../src/cni/cni-listing.js';
import type { PluginBinary, PluginInventory } from '../../src/cni/plugin-binary.js';

/** A listing from names and texts; `null` makes a directory, `{ readError }` an unreadable file. */
export function listing(
  files: Record<string, string | null | { readError: string }>,
  dir = '/etc/cni/net.d',
): CniListing {
  const entries: CniEntry[] = Object.entries(files).map(([name, content]) => {
    if (content === null) return { name, kind: 'directory' };
    if (typeof content === 'string') return { name, kind: 'file', text: content };
    return { name, kind: 'file', readError: content.readError };
  });
  return { dir, entries };
}

export function fixture(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../fixtures/cni/configs/${name}`, import.meta.url)), 'utf8');
}

const ALL = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0'];

/** Every named plugin present, executable, speaking every version unless told otherwise. */
export function inventory(
  types: readonly string[],
  overrides: Record<string, Partial<PluginBinary>> = {},
): PluginInventory {
  return new Map(
    types.map((type) => [
      type,
      { type, path: `/opt/cni/bin/${type}`, executable: true, supportedVersions: ALL, ...overrides[type] },
    ]),
  );
}

export const conflist = (name: string, types: readonly string[], cniVersion = '1.0.0'): string =>
  JSON.stringify({
    cniVersion,
    name,
    plugins: types.map((type, index) => (index === 0 ? { type, ipam: { type: 'host-local' } } : { type })),
  });

export const conf = (name: string, type: string, cniVersion = '1.0.0'): string =>
  JSON.stringify({ cniVersion, name, type });
