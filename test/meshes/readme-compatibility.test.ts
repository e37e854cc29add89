import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../harness/pod-namespace.js';
import { MESH_FIXTURES } from './mesh-fixtures.js';

interface SourceEntry {
  readonly mesh: string;
  readonly case: string;
  readonly tag: string;
  readonly commit: string;
  readonly kind?: string;
}

/** Release order: numeric parts compared as numbers, the default branch last. */
function releaseOrder(a: string, b: string): number {
  const key = (tag: string) => (tag.startsWith('default branch') ? [Infinity] : (tag.match(/\d+/g) ?? []).map(Number));
  const [x, y] = [key(a), key(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const diff = (x[i] ?? 0) - (y[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Each tag once, in release order, the default branch named by its commit. */
function tagList(entries: readonly SourceEntry[]): string {
  const tags = [
    ...new Set(
      entries.map((entry) =>
        entry.tag.startsWith('HEAD') ? `default branch ${entry.commit.slice(0, 12)}` : entry.tag,
      ),
    ),
  ].sort(releaseOrder);
  return tags.map((tag) => `\`${tag}\``).join(', ');
}

/**
 * The README's compatibility rows, from the CNI-mode fixtures (the ones the conformance suite
 * runs); Istio ambient renders no validator, so its row is istio-cni's rules goldens, by backend.
 */
function expectedRows(): string[] {
  const sources = JSON.parse(readFileSync(path.join(MESH_FIXTURES, 'sources.json'), 'utf8')) as SourceEntry[];
  const rows = ['linkerd', 'istio'].map((mesh) => {
    const entries = sources.filter((entry) => entry.mesh === mesh && !entry.case.startsWith('init-'));
    const cases = [...new Set(entries.map((entry) => entry.case))];
    return `| ${mesh} | ${tagList(entries)} | ${cases.join(', ')} |`;
  });
  const ambient = sources.filter((entry) => entry.mesh === 'istio-ambient');
  const backends = ['iptables', 'nftables'].map((backend) => {
    const tags = ambient.filter((entry) => entry.kind === `ambient-${backend}-golden`);
    return `${backend} rules goldens (${tagList(tags).split(', ')[0]} on)`;
  });
  const kuma = sources.filter((entry) => entry.mesh === 'kuma');
  const kumaCases = [...new Set(kuma.map((entry) => entry.case))].join(', ');
  return [
    ...rows,
    `| istio-ambient | ${tagList(ambient)} | ${backends.join(', ')} |`,
    `| kuma | ${tagList(kuma)} | ${kumaCases} |`,
  ];
}

describe("the README's compatibility section", () => {
  it('lists exactly the versions and cases the rendered fixtures hold', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const block = /<!-- compatibility:begin[^>]*-->\n([\s\S]*?)<!-- compatibility:end -->/.exec(readme)?.[1] ?? '';
    const rows = block.split('\n').filter((line) => /^\| (linkerd|istio|istio-ambient|kuma) \|/.test(line));
    expect(rows).toEqual(expectedRows());
  });
});
