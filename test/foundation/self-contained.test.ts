import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

// Spelled in pieces so that this file does not match itself.
const OUTSIDE = [
  ['..', 'shared'].join('/'),
  ['', 'work', 'shared'].join('/'),
  ['', 'work', 'main'].join('/'),
  ['', 'work', 'wt'].join('/'),
];

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file.length > 0);
}

/** Tracked text files that name a path outside the repository, with the offending string. */
function outsideReferences(files: readonly string[], read: (file: string) => string): string[] {
  const hits: string[] = [];
  for (const file of files) {
    const text = read(file);
    if (text.includes('\0')) continue;
    for (const needle of OUTSIDE) if (text.includes(needle)) hits.push(`${file}: ${needle}`);
  }
  return hits;
}

describe('the repository is self-contained', () => {
  it('no tracked file (test, script, benchmark, doc) refers to the shared folders outside it', () => {
    const files = trackedFiles();
    expect(files).toContain('package.json');
    expect(outsideReferences(files, (file) => readFileSync(path.join(root, file), 'latin1'))).toEqual([]);
  });

  it('the check finds such a reference when one is there', () => {
    const planted = `const corpus = path.resolve(root, '${OUTSIDE[0] ?? ''}/corpus');`;
    expect(outsideReferences(['planted.ts'], () => planted)).toEqual([`planted.ts: ${OUTSIDE[0] ?? ''}`]);
  });
});
