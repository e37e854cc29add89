// The project's commit-message rule: a subject of at most 72 characters, then a blank line before
// any body. Commits up to HISTORY_END keep the long subjects they were written with.
//   node scripts/commit-message.mjs FILE      check one message (the commit-msg hook)
//   node scripts/commit-message.mjs --since   check every commit after HISTORY_END on HEAD
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The last commit written before the rule; everything after it must follow the rule. */
export const HISTORY_END = 'f98c90b78f0ffcf265cab44d74fca88f70436555';
export const MAX_SUBJECT = 72;

/** What is wrong with a commit message, or [] when it follows the rule. Comment lines are git's. */
export function messageProblems(message) {
  const lines = message.split('\n').filter((line) => !line.startsWith('#'));
  const subject = lines[0] ?? '';
  const problems = [];
  if (subject.trim() === '') problems.push('the subject is empty');
  if ([...subject].length > MAX_SUBJECT)
    problems.push(`the subject has ${[...subject].length} characters; at most ${MAX_SUBJECT}`);
  if (lines.length > 1 && lines[1].trim() !== '') problems.push('the subject is not followed by a blank line');
  if (/\.\s*$/.test(subject)) problems.push('the subject ends with a full stop');
  return problems;
}

/** Problems of every commit after HISTORY_END on HEAD, as "abbrev subject: problem" lines. */
export function historyProblems(cwd) {
  const git = (...args) => execFileSync('git', args, { cwd, encoding: 'utf8' });
  try {
    git('cat-file', '-e', `${HISTORY_END}^{commit}`);
  } catch {
    return [`${HISTORY_END.slice(0, 7)}: not in this clone (shallow?), so new commits cannot be told from old ones`];
  }
  const out = git('log', '--format=%h%x00%B%x01', `${HISTORY_END}..HEAD`);
  return out
    .split('\x01')
    .map((entry) => entry.replace(/^\n/, ''))
    .filter((entry) => entry.includes('\0'))
    .flatMap((entry) => {
      const [hash, message] = entry.split('\0');
      return messageProblems(message).map((problem) => `${hash} ${message.split('\n')[0]}: ${problem}`);
    });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = process.argv[2];
  const problems = arg === '--since' ? historyProblems(process.cwd()) : messageProblems(readFileSync(arg, 'utf8'));
  for (const problem of problems) console.error(`commit message: ${problem}`);
  if (problems.length > 0) {
    console.error('A subject of at most 72 characters in the imperative, a blank line, then the why.');
    process.exit(1);
  }
}
