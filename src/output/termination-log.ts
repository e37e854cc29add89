import { closeSync, constants, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';

export type TerminationLogWrite = { readonly ok: true } | { readonly ok: false; readonly error: string };

// Never through a symlink (a link planted at the path must not redirect a root process's write),
// never blocking (a FIFO with no reader fails at once with ENXIO instead of hanging the verdict).
const FLAGS = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Writes the termination message to a regular file only: a FIFO, a device or a directory is
 * refused (ENOTREG / EISDIR) before anything is written. Failing to write it is logged by the
 * caller but never changes the verdict: the exit code alone carries the decision. `create` is for
 * a path the operator named; the default /dev/termination-log is only written when the kubelet
 * made it (outside a container, a missing one is not created in the host's /dev).
 */
export function writeTerminationLog(path: string, message: string, create: boolean): TerminationLogWrite {
  let fd: number;
  try {
    fd = openSync(path, create ? FLAGS | constants.O_CREAT : FLAGS, 0o644);
  } catch (error) {
    return { ok: false, error: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  }
  try {
    if (!fstatSync(fd).isFile()) return { ok: false, error: 'ENOTREG' };
    ftruncateSync(fd, 0);
    const bytes = Buffer.from(message, 'utf8');
    for (let written = 0; written < bytes.length;)
      written += writeSync(fd, bytes, written, bytes.length - written, written);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  } finally {
    closeSync(fd);
  }
}
