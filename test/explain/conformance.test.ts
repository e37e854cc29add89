import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/explain-command.js';
import { dumpSets, explainArgv, loadManifest } from './corpus.js';

const cases = loadManifest();

describe('conformance: every corpus case passes under its configuration', () => {
  it('reads the whole manifest', () => {
    expect(cases.length).toBe(69);
  });
  for (const testCase of cases) {
    for (const set of dumpSets(testCase)) {
      it(`${testCase.dir} (${set.name})`, async () => {
        const result = await runExplain(explainArgv(testCase, set, ['--format=text']), {});
        expect(result.stderr).toBe('');
        expect(result.stdout, result.stdout).toContain('PASSED');
        expect(result.exitCode).toBe(0);
      });
    }
  }
});
