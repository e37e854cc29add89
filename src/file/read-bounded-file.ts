import { fileErrorSentence } from './file-error.js';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Why a bounded read gave nothing: the caller names the file and picks its own reason code. */
export type BoundedReadProblem =
  | { readonly kind: 'unreadable'; readonly code: string }
  | { readonly kind: 'not-regular' }
  | { readonly kind: 'too-large'; readonly maxBytes: number };

export type BoundedRead =
  { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly error: BoundedReadProblem };

/**
 * Reads a file without ever blocking or reading without end: opened non-blocking (a FIFO with no
 * writer does not wait), refused unless a regular file (a FIFO, /dev/zero, a directory), and
 * refused when larger than `maxBytes`, by its size and again by what was read (a file that grows
 * while it is read). Synchronous on purpose: a regular file of bounded size reads at once, and no
 * signal waits behind it.
 */
export function readBoundedFile(path: string, maxBytes: number): BoundedRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return unreadable(error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, error: { kind: 'not-regular' } };
    if (stat.size > maxBytes) return { ok: false, error: { kind: 'too-large', maxBytes } };
    // Untouched pages of the buffer cost no memory; the extra byte detects a file that grew past the cap.
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read)
      read = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > maxBytes) return { ok: false, error: { kind: 'too-large', maxBytes } };
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return unreadable(error);
  } finally {
    closeSync(fd);
  }
}

function unreadable(error: unknown): BoundedRead {
  return { ok: false, error: { kind: 'unreadable', code: (error as NodeJS.ErrnoException).code ?? 'error' } };
}

/** The problem as the end of a sentence: `cannot read X: <this>`. */
export function describeProblem(problem: BoundedReadProblem): string {
  switch (problem.kind) {
    case 'unreadable':
      return fileErrorSentence({ code: problem.code });
    case 'not-regular':
      return 'not a regular file (a FIFO, device or directory is refused)';
    case 'too-large':
      return `larger than ${problem.maxBytes} bytes`;
  }
}
