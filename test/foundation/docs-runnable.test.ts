import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** Every Markdown page of the repository outside node_modules and test fixtures. */
function markdownPages(dir = ''): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist', '.git', 'fixtures'].includes(entry.name) ? [] : markdownPages(rel);
    return entry.name.endsWith('.md') ? [rel] : [];
  });
}

/** What CI runs: `.ci/run`, the npm scripts and every shell script those name. */
const ranByCi = [read('.ci/run'), read('package.json'), read('scripts/test.sh')].join('\n');

/** `bash some/script.sh` the docs tell a reader to run. */
const SCRIPT_RUN = /\bbash ((?:[\w.-]+\/)*[\w.-]+\.sh)\b/g;

describe('whatever the repository documents runs', () => {
  const pages = markdownPages();

  it('finds the pages it checks', () => {
    expect(pages).toContain('README.md');
    expect(pages.length).toBeGreaterThan(3);
  });

  it('every script a page tells the reader to run exists and CI runs it', () => {
    const unrun = pages.flatMap((page) =>
      [...read(page).matchAll(SCRIPT_RUN)]
        .map((match) => match[1] ?? '')
        .filter((script) => !existsSync(path.join(root, script)) || !ranByCi.includes(script))
        .map((script) => `${page}: ${script}`),
    );
    expect(unrun).toEqual([]);
  });

  it('every relative link on a page points at a file of the repository', () => {
    const broken = pages.flatMap((page) =>
      [...read(page).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1] ?? '')
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(path.join(root, path.dirname(page), target)))
        .map((target) => `${page}: ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('the script check can fail', () => {
    expect([...'run `bash e2e/nowhere/run.sh` here'.matchAll(SCRIPT_RUN)].map((m) => m[1])).toEqual([
      'e2e/nowhere/run.sh',
    ]);
  });
});
