import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Golden files live beside the corpus; `INTERLOCK_UPDATE_GOLDEN=1` rewrites them from the code. */
const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/golden');

/**
 * The golden text for `name`, after (re)writing it when asked: the caller compares. A missing
 * golden file is a failure, never a pass, so a new case must be refreshed on purpose.
 */
export function goldenFor(name: string, actual: string): string | undefined {
  const file = path.join(GOLDEN, name);
  if (process.env['INTERLOCK_UPDATE_GOLDEN'] === '1') {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, actual);
  }
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}
