import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reasonHeadline } from '../../src/reason/guide.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const README = read('README.md');
const PAGES = ['README.md', ...readdirSync(path.join(root, 'docs')).map((name) => `docs/${name}`)].filter((file) =>
  file.endsWith('.md'),
);

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1] ?? '')));
}

describe('the README is the page an operator reads in ten minutes', () => {
  it('about 200 lines; the lab notebook and the reference tables live in docs/', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(220);
    for (const moved of [
      '## Benchmarks',
      '## Reliability',
      '## Mutation testing',
      '## Flags',
      '## Exit codes',
      '## Reasons',
    ])
      expect(README, moved).not.toContain(`\n${moved}`);
    expect(README).not.toContain('<!-- generated:');
  });

  it('the two commands are at the very top: the demo of the main job and the whole test suite', () => {
    const top = README.split('\n').slice(0, 40).join('\n');
    expect(top).toMatch(/^npm run demo {4}# /m);
    expect(top).toMatch(/^npm test {8}# /m);
  });

  it("its blocked pod's message opens with the headline validate writes", () => {
    expect(README).toContain(`Message:      ${reasonHeadline('InterceptionMissing')}\n`);
  });

  it('its YAML is none: it shows the commands that print the manifests instead', () => {
    expect(README).not.toMatch(/```ya?ml/);
  });
});

describe('every relative link of the README and docs/ resolves, anchors included', () => {
  for (const page of PAGES) {
    it(page, () => {
      const text = read(page);
      for (const [, target = ''] of text.matchAll(/\]\((?!https?:|mailto:)([^)\s]+)\)/g)) {
        const [file = '', anchor] = target.split('#');
        const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
        expect(existsSync(path.join(root, resolved)), `${page} -> ${target}`).toBe(true);
        if (anchor && resolved.endsWith('.md'))
          expect(anchors(read(resolved)).has(anchor), `${page} -> ${target}`).toBe(true);
      }
    });
  }
});
