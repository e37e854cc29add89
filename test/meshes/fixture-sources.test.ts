import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureSources, MESH_FIXTURES } from './mesh-fixtures.js';

/**
 * The fixtures are upstream's bytes, not ours: each file's SHA-256 is the one sources.json pins,
 * a whole-file copy hashes to upstream's git blob id, and no file sits in the folder unlisted
 * (one added by hand would otherwise pass as a mesh's output).
 */
const sources = fixtureSources();

/** Files under the fixture folder that are not upstream copies: the index, the notes and the facts read from source. */
const NOT_COPIES = /^(sources\.json|README\.md|facts\/[^/]+\.json)$/;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

/** Git's object id of a blob: SHA-1 over `blob <size>\0` and the bytes. */
function gitBlobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

describe('mesh fixtures: sources.json pins every file', () => {
  it('lists every file of the folder exactly once, and only files that exist', () => {
    const listed = sources.map((source) => source.file);
    expect(new Set(listed).size).toBe(listed.length);
    const present = filesUnder(MESH_FIXTURES).filter((file) => !NOT_COPIES.test(file));
    expect([...present].sort()).toEqual([...listed].sort());
  });

  it.each(sources.map((source) => [source.file, source] as const))('%s: SHA-256 and blob id', (_file, source) => {
    const bytes = readFileSync(path.join(MESH_FIXTURES, source.file));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(source.sha256);
    if (source.trim === 'whole file') expect(gitBlobId(bytes)).toBe(source.blob);
  });

  it('files the ambient goldens by tag and backend under the upstream name, from cni/pkg/<backend>/testdata', () => {
    const ambient = sources.filter((source) => source.mesh === 'istio-ambient');
    expect(ambient.length).toBeGreaterThan(0);
    for (const source of ambient) {
      const backend = source.kind === 'ambient-nftables-golden' ? 'nftables' : 'iptables';
      expect(source.kind).toBe(`ambient-${backend}-golden`);
      expect(source.path).toBe(`cni/pkg/${backend}/testdata/${source.case}.golden`);
      const folder = source.tag.startsWith('HEAD') ? `HEAD-${source.commit.slice(0, 12)}` : source.tag;
      expect(source.file).toBe(`istio-ambient/${folder}/${backend}/${source.case}.golden`);
      expect(source.repository).toBe('istio/istio');
      expect(source.trim).toBe('whole file');
    }
  });

  it('pins every ambient fact to a repository, tag, commit, path and line', () => {
    const facts = JSON.parse(readFileSync(path.join(MESH_FIXTURES, 'facts/istio-ambient.json'), 'utf8')) as Record<
      string,
      unknown
    >[];
    expect(facts.length).toBeGreaterThan(0);
    for (const fact of facts) {
      expect(fact['repository']).toMatch(/^istio\/(istio|ztunnel|api)$/);
      expect(fact['commit']).toMatch(/^[0-9a-f]{40}$/);
      expect(fact['tag']).toEqual(expect.any(String));
      expect(fact['path']).toEqual(expect.any(String));
      expect(Number.isInteger(fact['line']) && (fact['line'] as number) > 0).toBe(true);
    }
  });
});
