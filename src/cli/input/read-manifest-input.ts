import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { fileErrorSentence } from '../../file/file-error.js';
import { quotedPath } from '../../config/echo-value.js';
import { fail, ok, type Result } from '../../reason/result.js';

/**
 * Most bytes `inject` reads. The input and the output are both held as strings while a document
 * is parsed (at most MAX_DOCUMENT_BYTES at a time), which `npm run bench` measures under the
 * image's 192 MiB heap.
 */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/** `16 MiB`: a byte cap as help and messages print it. */
export const mebibytes = (bytes: number): string => `${bytes / 1024 / 1024} MiB`;

type Read = Result<Buffer, 'ManifestUnreadable' | 'ManifestTooLarge'>;

/** Reads `-f FILE`: a regular file only (a FIFO or device is refused, never waited on), at most `cap` bytes. */
export function readManifestFile(path: string, cap = MAX_MANIFEST_BYTES): Read {
  const shown = quotedPath(path);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return unreadable(`cannot read ${shown}: ${fileErrorSentence(error)}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      return unreadable(`cannot read ${shown}: not a regular file (a FIFO, device or directory is refused)`);
    if (stat.size > cap) return tooLarge(shown, cap);
    const buffer = Buffer.allocUnsafe(cap + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read)
      read = readSync(fd, buffer, length, buffer.length - length, null);
    return length > cap ? tooLarge(shown, cap) : ok(buffer.subarray(0, length));
  } catch (error) {
    return unreadable(`cannot read ${shown}: ${fileErrorSentence(error)}`);
  } finally {
    closeSync(fd);
  }
}

/** Reads standard input to its end, stopping (and refusing) at `cap` + 1 bytes: `cat /dev/zero |` ends at once. */
export async function readStdinBounded(
  stream: NodeJS.ReadableStream = process.stdin,
  cap = MAX_MANIFEST_BYTES,
): Promise<Read> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(buffer);
      length += buffer.length;
      if (length > cap) {
        (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        return tooLarge('standard input', cap);
      }
    }
  } catch (error) {
    return unreadable(`cannot read standard input: ${fileErrorSentence(error)}`);
  }
  return ok(Buffer.concat(chunks, length));
}

function unreadable(message: string): Read {
  return fail('ManifestUnreadable', message);
}

function tooLarge(shown: string, cap: number): Read {
  return fail('ManifestTooLarge', `${shown} is larger than the ${mebibytes(cap)} input cap`);
}
