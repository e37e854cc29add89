import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectGolden } from '../harness/golden.js';

const script = fileURLToPath(new URL('../harness/cli-outputs.mjs', import.meta.url));
const golden = fileURLToPath(new URL('../fixtures/golden/cli/outputs.jsonl', import.meta.url));

// Every help text, completion script and refusal of a flag or variable, byte for byte: a change
// to any of them is a change an operator sees, made on purpose and reviewed in the golden's diff.
describe('the printed answers of the CLI', () => {
  it('are the recorded ones, byte for byte', () => {
    const outputs = execFileSync('unshare', ['--net', process.execPath, script], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const records = outputs.trim().split('\n');
    // Sanity: the generator found the refusals (one per command and flag at least) and the help.
    expect(records.length).toBeGreaterThan(600);
    expectGolden(golden, outputs);
  });
});
