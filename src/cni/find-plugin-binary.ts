import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * libcni's FindInPath: the first directory holding a regular file (symlinks followed) named after
 * the plugin type. FindInPath ignores the mode, so executability is asked separately: as root,
 * any execute bit will do; the runtime fails with "permission denied" without one.
 */
export async function findPluginBinary(type: string, binDirs: readonly string[]): Promise<{ path?: string; executable: boolean }> {
  if (type === '' || type.includes('/')) return { executable: false };
  for (const dir of binDirs) {
    const path = join(dir, type);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) continue;
    const executable = await access(path, constants.X_OK).then(
      () => true,
      () => false,
    );
    return { path, executable };
  }
  return { executable: false };
}
