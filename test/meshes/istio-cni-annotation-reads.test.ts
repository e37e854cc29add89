import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeConfigOf } from '../../src/cli/commands/node/config.js';
import { parseMinorVersion } from '../../src/config/flag-parsers.js';
import { ambientAnnotationsRead, type AmbientPodAnnotation } from '../../src/mesh/istio-ambient.js';

// Issue #44, item 5: which of an ambient pod's own annotations istio-cni reads changed by version
// (1.24 read only bypass-inbound-capture; 1.25 added dns-capture and reroute-virtual-interfaces).
// The table in src/mesh/istio-ambient.ts is checked here against the `pod-override` facts pinned
// from cni/pkg/nodeagent/net.go at every tag whose goldens test/fixtures holds.
const fixtures = (relative: string) => fileURLToPath(new URL(`../fixtures/meshes/${relative}`, import.meta.url));
interface Fact {
  readonly tag: string;
  readonly commit: string;
  readonly fact: string;
  readonly name: string;
}
const FACTS = JSON.parse(readFileSync(fixtures('facts/istio-ambient.json'), 'utf8')) as Fact[];
const KEY_OF: Readonly<Record<string, AmbientPodAnnotation>> = {
  AmbientBypassInboundCapture: 'bypassInboundCapture',
  AmbientDnsCapture: 'dnsCapture',
  IoIstioRerouteVirtualInterfaces: 'rerouteVirtualInterfaces',
};
const TAGS = readdirSync(fixtures('istio-ambient')).sort();

/** The tag directory's facts: by tag, or for the default branch (HEAD-<commit>) by commit. */
function factsAt(tag: string): Fact[] {
  const head = /^HEAD-([0-9a-f]+)$/.exec(tag)?.[1];
  return FACTS.filter((fact) => (head ? fact.commit.startsWith(head) : fact.tag === tag));
}

function versionOf(tag: string): readonly [number, number] | undefined {
  const parsed = parseMinorVersion(tag);
  return tag.startsWith('HEAD-') || !parsed.ok ? undefined : parsed.value;
}

describe("istio-cni's reading of ambient pods' annotations, per tag", () => {
  it('covers every tag of the fixtures (1.21.0 to the default branch)', () => {
    expect(TAGS.length).toBe(10);
    for (const tag of TAGS) expect(factsAt(tag).length, tag).toBeGreaterThan(0);
  });

  for (const tag of TAGS)
    it(`${tag}: the table says exactly what net.go reads there`, () => {
      const pinned = factsAt(tag)
        .filter((fact) => fact.fact === 'pod-override')
        .map((fact) => KEY_OF[fact.name]);
      expect(pinned.every((key) => key !== undefined)).toBe(true);
      expect([...ambientAnnotationsRead(versionOf(tag))].sort()).toEqual(pinned.sort());
    });

  it('a version before 1.21 reads none, one after the newest row reads all three, no version the newest', () => {
    expect(ambientAnnotationsRead([1, 20]).size).toBe(0);
    expect(ambientAnnotationsRead([0, 99]).size).toBe(0);
    expect(ambientAnnotationsRead([2, 0]).size).toBe(3);
    expect([...ambientAnnotationsRead()]).toEqual([...ambientAnnotationsRead([1, 30])]);
  });

  it('--istio-cni-version takes MAJOR.MINOR with or without a patch, and refuses anything else', () => {
    expect(parseMinorVersion('1.24')).toEqual({ ok: true, value: [1, 24] });
    expect(parseMinorVersion('v1.25.3')).toEqual({ ok: true, value: [1, 25] });
    expect(parseMinorVersion(' 10.24.1000 ')).toEqual({ ok: true, value: [10, 24] });
    expect(parseMinorVersion('x1.24')).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('MAJOR.MINOR') },
    });
    for (const bad of ['', '1', '1.x', '1.24.0-beta.1', 'latest']) expect(parseMinorVersion(bad).ok, bad).toBe(false);
  });

  it('node --istio-cni-version hands its reading to the re-check (the newest without it)', () => {
    const recheck = (extra: string[]) => {
      const config = nodeConfigOf(
        ['--node-name', 'n', '--mesh', 'istio-ambient', '--recheck-interval', '1m', ...extra],
        {},
      );
      if (typeof config === 'string') throw new Error(config);
      return [...(config.recheck?.ambientReads ?? [])].sort();
    };
    expect(recheck(['--istio-cni-version', '1.24'])).toEqual(['bypassInboundCapture']);
    expect(recheck([])).toEqual(['bypassInboundCapture', 'dnsCapture', 'rerouteVirtualInterfaces']);
  });
});
