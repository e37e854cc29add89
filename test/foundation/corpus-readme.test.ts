import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { casesTable, renderReadme, type CorpusManifest } from '../../scripts/corpus-readme.mjs';

const corpus = path.resolve(import.meta.dirname, '../fixtures/corpus');
const readme = readFileSync(path.join(corpus, 'README.md'), 'utf8');
const manifest = JSON.parse(readFileSync(path.join(corpus, 'manifest.json'), 'utf8')) as CorpusManifest;

/** The case directories the README's provenance table names, in order. */
function listedCases(text: string): string[] {
  return [...text.matchAll(/^\| `([a-z0-9-]+\/[a-z0-9-]+)` \|/gm)].map((match) => match[1] ?? '');
}

describe('the corpus README', () => {
  it('gives the provenance of every manifest case, and of nothing else', () => {
    expect(manifest.cases.length).toBeGreaterThan(60);
    expect(listedCases(readme)).toEqual(manifest.cases.map((c) => c.dir));
  });

  it("names each case's upstream source file and configuration, as the manifest says", () => {
    for (const c of manifest.cases) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${c.dir}\` |`)) ?? '';
      expect(row, c.dir).toContain(c.source);
      expect(row, c.dir).toContain(c.mesh);
    }
  });

  it('is what scripts/corpus-readme.mjs generates from the manifest (run it after changing the manifest)', () => {
    expect(renderReadme(readme, manifest)).toBe(readme);
  });

  it('notices a case missing from the table', () => {
    const fewer = { cases: manifest.cases.slice(1) };
    expect(listedCases(casesTable(fewer))).not.toEqual(manifest.cases.map((c) => c.dir));
    expect(renderReadme(readme, fewer)).not.toBe(readme);
  });
});
