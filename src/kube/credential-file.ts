import { describeProblem, readBoundedFile } from '../file/read-bounded-file.js';
import { fail, ok, type Result } from '../reason/result.js';

/** No kubeconfig, certificate bundle or token comes near this; a larger file is refused unread. */
export const MAX_CREDENTIAL_FILE_BYTES = 1024 * 1024;

/**
 * A kubeconfig, certificate, key or token file, read with the one bounded reader: a FIFO, a device
 * or an oversized file is refused at once (`KubeUnavailable`, naming the file), never waited on
 * or read without end. `missing` tells a file that does not exist apart (a kubeconfig list skips it).
 */
export function readCredentialFile(
  what: string,
  path: string,
  maxBytes = MAX_CREDENTIAL_FILE_BYTES,
): Result<Buffer, 'KubeUnavailable'> & { readonly missing?: true } {
  const read = readBoundedFile(path, maxBytes);
  if (read.ok) return ok(read.bytes);
  const failure = fail('KubeUnavailable', `cannot read ${what} ${path}: ${describeProblem(read.error)}`);
  return read.error.kind === 'unreadable' && read.error.code === 'ENOENT' ? { ...failure, missing: true } : failure;
}
