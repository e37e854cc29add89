import { mebibytes } from './read-manifest-input.js';
import { quotedPath } from '../../config/echo-value.js';
import { describeProblem, readBoundedFile } from '../../file/read-bounded-file.js';
import { fail, ok, type Result } from '../../reason/result.js';

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
  const shown = `${source} ${quotedPath(path)}`;
  const read = readBoundedFile(path, budget);
  if (read.ok) return ok(read.bytes.toString('utf8'));
  if (read.error.kind === 'too-large') return tooLarge(shown);
  return fail('RulesUnreadable', `cannot read ${shown}: ${describeProblem(read.error)}`);
}

function tooLarge(shown: string): Result<never, 'RulesUnparseable'> {
  return fail(
    'RulesUnparseable',
    `${shown} is larger than the ${mebibytes(MAX_INPUT_BYTES)} input cap (all dumps together); save only the pod's network namespace`,
  );
}
