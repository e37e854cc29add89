import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { CORPUS, dumpSets, explainArgv, loadManifest } from './corpus.js';
import { expectGolden } from '../harness/golden.js';

/** Golden files live beside the corpus. */
const GOLDEN = path.resolve(CORPUS, '../golden');
const cases = loadManifest();

interface Report {
  status: string;
  expectations: Array<{ id: string; expected: string; holds: boolean; regions: unknown[]; outcomes: unknown[] }>;
}

describe('conformance: every corpus case passes under its configuration, with the expectations of its golden file', () => {
  it('reads the whole manifest', () => {
    expect(cases.length).toBe(69);
  });
  for (const testCase of cases) {
    for (const set of dumpSets(testCase)) {
      it(`${testCase.dir} (${set.name})`, async () => {
        const result = await runExplain(explainArgv(testCase, set, ['--format=json']), {});
        expect(result.stderr).toBe('');
        const report = JSON.parse(result.stdout) as Report;
        expect(report.status, result.stdout.slice(0, 4000)).toBe('passed');
        expect(result.exitCode).toBe(0);
        // The regions asked about and where the rules send them: an expectation that stops being
        // asked, a region that shrinks, or a different deciding rule changes this file.
        const actual = report.expectations
          .map(
            ({ id, expected, holds, regions, outcomes }) =>
              `${JSON.stringify({ id, expected, holds, regions, outcomes })}\n`,
          )
          .join('');
        expectGolden(path.join(GOLDEN, testCase.dir, `${set.name}.json`), actual);
      });
    }
  }
});
