import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * libcni's FindInPath: the first directory holding a regular file (symlinks followed) named after
 * the plugin type. FindInPath ignores the mode, so executability is judged separately, as for the
 * runtime, which runs as root: any execute bit will do (whoever runs this check); without one the
 * runtime fails with "permission denied".
 */
export async function findPluginBinary(
  type: string,
  binDirs: readonly string[],
): Promise<{ path?: string; executable: boolean }> {
  if (type === '' || type.includes('/')) return { executable: false };
  for (const dir of binDirs) {
    const path = join(dir, type);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) continue;
    return { path, executable: (info.mode & 0o111) !== 0 };
  }
  return { executable: false };
}
