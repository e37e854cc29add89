import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MEMORY_LIMIT_RULE, NO_CPU_LIMIT_COMMENT } from '../../src/inject/resources.js';
import { WEBHOOK_NAME, WEBHOOK_NAMESPACE } from '../../src/webhook/webhook-manifest.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const DOCS = ['README.md', ...readdirSync(path.join(root, 'docs')).map((name) => `docs/${name}`)].filter((file) =>
  file.endsWith('.md'),
);

/** Words of the project's own bookkeeping, which an operator cannot act on. */
const BOOKKEEPING = /\bissue \d+|\bissue \d+'s|\bonce it is merged\b|\bat merge\b|\bwork in progress\b|\bTODO\b/i;

describe('the docs speak of the product only', () => {
  for (const file of DOCS) {
    it(`${file} names no issue or unfinished work`, () => {
      const lines = read(file)
        .split('\n')
        .filter((line) => BOOKKEEPING.test(line));
      expect(lines).toEqual([]);
    });
  }

  it('the check can fail', () => {
    expect(BOOKKEEPING.test("issue 12's scenarios")).toBe(true);
    expect(BOOKKEEPING.test('see the flag table once it is merged')).toBe(true);
  });
});

describe("validate's peak RSS is stated once, and the manifests' resources use that figure", () => {
  const bench = /^\| validate pass, start-up snapshot \|.*Peak RSS ([\d.]+) MiB/m.exec(read('docs/benchmarks.md'));
  const used = /measured peak RSS ([\d.]+) MiB/.exec(NO_CPU_LIMIT_COMMENT);

  it("docs/benchmarks.md's row (from `npm run bench`) is the figure the requests are computed from", () => {
    expect(bench?.[1]).toBeDefined();
    expect(used?.[1]).toBe(bench?.[1]);
  });

  it('no other page restates a peak RSS for a passing validate', () => {
    for (const file of DOCS.filter((name) => name !== 'docs/benchmarks.md'))
      expect(read(file), file).not.toMatch(/peak RSS (of a passing validate )?\d+(\.\d+)? MiB plus/i);
  });
});

describe("one sentence for a mesh's too-low memory limit", () => {
  const flat = (file: string) => read(file).replace(/\s+/g, ' ');
  const unreleased = (text: string) => {
    const start = text.indexOf('## [Unreleased]');
    return text.slice(start, text.indexOf('\n## [', start + 1));
  };

  it('the CHANGELOG, docs/admission.md and docs/operator.md state MEMORY_LIMIT_RULE word for word', () => {
    expect(unreleased(read('CHANGELOG.md')).replace(/\s+/g, ' ')).toContain(MEMORY_LIMIT_RULE);
    for (const file of ['docs/admission.md', 'docs/operator.md']) expect(flat(file), file).toContain(MEMORY_LIMIT_RULE);
  });

  it('no page tells another story (inject keeps it, 20Mi OOM-kills a pass, 20Mi is enough)', () => {
    for (const file of [...DOCS, 'CHANGELOG.md'])
      expect(flat(file), file).not.toMatch(
        /keeps its memory limit|is kept, with a warning|under which Interlock .* is OOM-killed|limit no longer OOM-kills the drop-in \(exit 137\): it passes/,
      );
  });
});

describe("the docs name the webhook's Service as manifest prints it", () => {
  const service = `${WEBHOOK_NAME}.${WEBHOOK_NAMESPACE}.svc`;
  /** Every `interlock-webhook.<namespace>.svc` a page writes, the DNS name the API server dials. */
  const serviceNames = (text: string) =>
    [...text.matchAll(/\binterlock-webhook\.([a-z0-9-]+)\.svc\b/g)].map((m) => m[0]);

  it("docs/admission.md's client-certificate user is the default Service's DNS name", () => {
    const names = serviceNames(read('docs/admission.md'));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toBe(service);
  });

  it('the check can fail: the old namespace is caught', () => {
    expect(serviceNames('- name: interlock-webhook.interlock-system.svc')).not.toEqual([service]);
  });
});
