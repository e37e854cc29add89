import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runManifest } from '../../src/cli/commands/manifest/run.js';

/** A word that stands for something the operator must fill in: FILE, NS, IMAGE, [flags], <name>. */
const PLACEHOLDER = /^(?:[A-Z][A-Z_]+|\[.*|.*\]|<.*>|\.\.\.)$/;

const COMMANDS = ['interlock', 'kubectl', 'helm'];

/** Words as a POSIX shell splits them (single and double quotes; no expansion needed here). */
function shellWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3] ?? '');
  return words;
}

/** The commands of a fix line: its comment dropped, split at `;`, `&&` and `|`. */
function commandsOf(fix: string): string[][] {
  const code = fix.replace(/\s#\s.*$/, '');
  return code
    .split(/;|&&|\|/)
    .map((part) => shellWords(part.trim()))
    .filter((words) => words.length > 0);
}

/**
 * A `fix:` line an operator can paste: every command is a real one with no placeholder word, and
 * each `interlock manifest` in it prints (exit 0) with exactly the words given.
 */
export async function expectPasteable(fix: string | undefined): Promise<void> {
  if (fix === undefined) return;
  // Prose (`upgrade: re-apply ...`) is advice, not a command; a command starts with its program.
  for (const words of commandsOf(fix).filter((command) => COMMANDS.includes(command[0] ?? ''))) {
    expect(
      words.filter((word) => PLACEHOLDER.test(word)),
      `placeholder in: ${fix}`,
    ).toEqual([]);
    if (words[0] === 'interlock' && words[1] === 'manifest') await expectPrints(fix, words.slice(2));
  }
}

/**
 * `interlock manifest ARGS` prints (exit 0). A file an earlier command of the line writes
 * (`... > interlock-ca.crt && interlock manifest --ca-bundle interlock-ca.crt`) is made for it, a
 * PEM certificate in a temp directory, as the line would leave it.
 */
async function expectPrints(fix: string, args: readonly string[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-fix-'));
  try {
    const argv = args.map((word) => {
      if (!new RegExp(`> ${word.replace(/[.]/g, '\\.')}(\\s|$)`).test(fix)) return word;
      const file = join(dir, word);
      writeFileSync(file, '-----BEGIN CERTIFICATE-----\nMIIBfix\n-----END CERTIFICATE-----\n');
      return file;
    });
    const outcome = await runManifest(argv, {});
    expect(outcome.exitCode, `interlock manifest ${args.join(' ')}: ${outcome.stderr}`).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
