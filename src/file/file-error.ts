/**
 * A file system error as a sentence an operator acts on: errno names (ENOENT) and Node's ERR_
 * codes never reach the user. The caller names the file; this says what is wrong and what to do.
 */
const SENTENCES: Readonly<Record<string, string>> = {
  ENOENT: 'it does not exist; check the path',
  ENOTDIR: 'a part of the path is not a directory; check the path',
  EISDIR: 'it is a directory; name a file',
  EACCES: 'permission denied; run as a user that may read it, or change its mode',
  EPERM: 'the operation is not permitted; run as a user that may read it',
  ELOOP: 'it has too many levels of symbolic links; check where they point',
  ENAMETOOLONG: 'the path is too long',
  EMFILE: 'too many open files in this process; retry',
  ENFILE: 'too many open files on this machine; retry',
  EIO: 'an input/output error from the device; check the disk or volume',
  ENXIO: 'no such device behind it',
  EAGAIN: 'it is not ready to be read (would block); name a regular file',
  EBADF: 'it could not be read; name a regular file',
  ENODEV: 'no such device behind it',
};

export function fileErrorSentence(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && SENTENCES[code]) || 'it cannot be read; check the path and its permissions';
}
