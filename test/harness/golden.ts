import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

/** The one switch that rewrites golden files from the code: `INTERLOCK_UPDATE_GOLDEN=1 npm test`. */
const UPDATE_GOLDEN = 'INTERLOCK_UPDATE_GOLDEN';

/**
 * Compares `actual` with the golden file at `file` (absolute), after rewriting it when
 * INTERLOCK_UPDATE_GOLDEN=1. A missing golden file fails, never passes: a new case is recorded
 * on purpose, and a review of the diff is the point of a golden file.
 */
export function expectGolden(file: string, actual: string): void {
  if (process.env[UPDATE_GOLDEN] === '1') {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, actual);
  }
  expect(existsSync(file), `${file} is missing: record it with ${UPDATE_GOLDEN}=1 and review the diff`).toBe(true);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}
