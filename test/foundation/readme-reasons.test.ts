import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REASONS } from '../../src/reason/reason.js';

// The reasons table lives in docs/reference.md, which the README links to.
const readme = readFileSync(path.resolve(import.meta.dirname, '../../docs/reference.md'), 'utf8');

/** Every `Name` in the first column of the table under the given heading. */
function reasonsTable(markdown: string, heading = '## Reasons'): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) return [];
  const rest = markdown.slice(start + heading.length + 2);
  const section = rest.slice(0, rest.search(/\n## /) >>> 0);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1] ?? ''));
}

describe("docs/reference.md's reasons table", () => {
  it('lists exactly the reasons of the one Reason union (src/reason/reason.ts), each once', () => {
    const listed = reasonsTable(readme);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(REASONS).sort());
  });

  it('notices a reason the table leaves out, and one the union does not have', () => {
    const without = readme.replace(/^\| `RulesEngineError` \|.*\n/m, '');
    expect(without).not.toBe(readme);
    expect([...reasonsTable(without)].sort()).not.toEqual(Object.keys(REASONS).sort());
    const extra = readme.replace('| `NotProven` |', '| `NotProven`, `Vanished` |');
    expect([...reasonsTable(extra)].sort()).not.toEqual(Object.keys(REASONS).sort());
  });
});
