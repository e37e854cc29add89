import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

/** The `## [x.y.z] - YYYY-MM-DD` release headings of a Keep a Changelog file, in order. */
function releases(changelog: string): { version: string; date: string }[] {
  return [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\] - (\d{4}-\d{2}-\d{2})$/gm)].map((m) => ({
    version: m[1] ?? '',
    date: m[2] ?? '',
  }));
}

/** Headings of level 2 and 3 that Keep a Changelog does not have. */
function strayHeadings(changelog: string): string[] {
  const kinds = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];
  return changelog
    .split('\n')
    .filter((line) => /^#{2,3} /.test(line))
    .filter((line) => !/^## \[Unreleased\]$/.test(line) && !/^## \[\d+\.\d+\.\d+\S*\] - \d{4}-\d{2}-\d{2}$/.test(line))
    .filter((line) => !kinds.some((kind) => line === `### ${kind}`));
}

/** `section: kind` for every kind heading that appears twice within one release section. */
function repeatedKinds(changelog: string): string[] {
  const repeated: string[] = [];
  for (const section of changelog.split(/^## /m).slice(1)) {
    const name = /^\[([^\]]+)\]/.exec(section)?.[1] ?? '?';
    const kinds = [...section.matchAll(/^### (\w+)$/gm)].map((match) => match[1] ?? '');
    for (const kind of new Set(kinds))
      if (kinds.filter((other) => other === kind).length > 1) repeated.push(`${name}: ${kind}`);
  }
  return repeated;
}

describe('CHANGELOG.md (Keep a Changelog)', () => {
  const changelog = read('CHANGELOG.md');
  const { version } = JSON.parse(read('package.json')) as { version: string };

  it("has a section for package.json's version", () => {
    expect(releases(changelog).map((release) => release.version)).toContain(version);
  });

  it('starts with Unreleased, then releases newest first, each heading a Keep a Changelog kind', () => {
    expect(changelog.indexOf('## [Unreleased]')).toBeLessThan(changelog.indexOf('## [0.1.0]'));
    const found = releases(changelog);
    const sorted = [...found].sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
    expect(found).toEqual(sorted);
    expect(strayHeadings(changelog)).toEqual([]);
  });

  it('each release lists a kind once, so its changes of one kind are read in one place', () => {
    expect(repeatedKinds(changelog)).toEqual([]);
  });

  it('the checks fail on a changelog without the version, or with a made-up heading', () => {
    expect(repeatedKinds(`## [Unreleased]\n### Fixed\n- a\n### Added\n- b\n### Fixed\n- c\n`)).toEqual([
      'Unreleased: Fixed',
    ]);
    const without = changelog.replace(/^## \[0\.1\.0\].*$/m, '## [0.0.9] - 2026-01-01');
    expect(releases(without).map((release) => release.version)).not.toContain('0.1.0');
    expect(strayHeadings(`${changelog}\n### Improvements\n`)).toEqual(['### Improvements']);
  });
});
