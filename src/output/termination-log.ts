import { writeFileSync } from 'node:fs';

/**
 * Writes the termination message. Failing to write it is logged by the caller but never changes
 * the verdict: the exit code alone must carry the decision.
 */
export function writeTerminationLog(path: string, message: string): { ok: true } | { ok: false; code: string } {
  try {
    writeFileSync(path, message, { encoding: 'utf8' });
    return { ok: true };
  } catch (error) {
    return { ok: false, code: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  }
}
