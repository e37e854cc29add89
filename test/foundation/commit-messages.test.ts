import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script with no declarations; its two functions are exercised here.
import { historyProblems, messageProblems } from '../../scripts/commit-message.mjs';

const root = path.resolve(import.meta.dirname, '../..');
const check = historyProblems as (cwd: string) => string[];
const problemsOf = messageProblems as (message: string) => string[];
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-commits-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('commit messages (scripts/commit-message.mjs, .githooks/commit-msg)', () => {
  it('every commit since the rule has a subject of at most 72 characters and a blank line after it', () => {
    expect(check(root)).toEqual([]);
  });

  it('a new commit with a 73-character subject fails the history check, naming it', () => {
    const clone = path.join(scratch, 'clone');
    execFileSync('git', ['clone', '-q', '--no-checkout', root, clone]);
    const subject = 'Make the subject of this commit exactly seventy-three characters long ok'.padEnd(73, 'x');
    expect([...subject]).toHaveLength(73);
    const git = ['-C', clone, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid'];
    execFileSync('git', [...git, 'commit', '-q', '--allow-empty', '--no-verify', '-m', subject]);
    const problems = check(clone);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('the subject has 73 characters; at most 72');
  });

  it('judges one message: length, the blank line, a full stop, git comment lines ignored', () => {
    expect(problemsOf('Fix the probe deadline\n\nWhy it matters.\n')).toEqual([]);
    expect(problemsOf(`${'a'.repeat(72)}\n`)).toEqual([]);
    expect(problemsOf(`${'a'.repeat(73)}\n`)).toEqual(['the subject has 73 characters; at most 72']);
    expect(problemsOf('Fix it\nno blank line\n')).toEqual(['the subject is not followed by a blank line']);
    expect(problemsOf('Fix it.\n')).toEqual(['the subject ends with a full stop']);
    expect(problemsOf('# comment\nFix it\n\n# Please enter\n')).toEqual([]);
    expect(problemsOf('\n')).toEqual(['the subject is empty']);
  });
});
