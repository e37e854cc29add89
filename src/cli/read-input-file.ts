import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { echoValue } from '../config/echo-value.js';
import { fail, ok, type Result } from '../reason/result.js';

/**
 * Most bytes `explain` reads, all its dumps together: a 150k-rule iptables-save of 16 MiB peaks
 * at about 245 MiB of memory when parsed and traced, under the 256 MiB bound.
 */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/**
 * Reads a dump without ever blocking or reading without end: opened non-blocking (a FIFO with no
 * writer does not wait), refused unless a regular file (a FIFO, /dev/zero, a directory), and
 * refused when larger than `budget` (what is left of MAX_INPUT_BYTES), by its size and again by
 * what was read.
 * RulesUnreadable: the file cannot be read (exit 66); RulesUnparseable: it is too large (exit 65).
 */
export function readInputFile(
  source: string,
  path: string,
  budget = MAX_INPUT_BYTES,
): Result<string, 'RulesUnreadable' | 'RulesUnparseable'> {
  const shown = `${source} "${echoValue(path)}"`;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return fail('RulesUnreadable', `cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      return fail(
        'RulesUnreadable',
        `cannot read ${shown}: not a regular file (a FIFO, device or directory is refused)`,
      );
    if (stat.size > budget) return tooLarge(shown);
    // Untouched pages of the buffer cost no memory; the extra byte detects a file that grew past the cap.
    const buffer = Buffer.allocUnsafe(budget + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read)
      read = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > budget) return tooLarge(shown);
    return ok(buffer.toString('utf8', 0, length));
  } catch (error) {
    return fail('RulesUnreadable', `cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  } finally {
    closeSync(fd);
  }
}

function tooLarge(shown: string): Result<never, 'RulesUnparseable'> {
  return fail(
    'RulesUnparseable',
    `${shown} is larger than the 16 MiB input cap (all dumps together); save only the pod's network namespace`,
  );
}
