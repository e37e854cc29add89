import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import {
  ambientAnnotationsRead,
  ISTIO_AMBIENT_POD_ANNOTATIONS as NAMES,
  type AmbientPodAnnotation,
} from '../../src/mesh/istio-ambient.js';
import { dumpGolden, makeNamespace, removeNamespace } from './dumps.js';
import { ambientGoldens, goldenEnv, goldenFlags, type AmbientGolden } from './goldens.js';

// Issue #44, item 5: istio-cni reads an ambient pod's own annotations per version (1.21 to 1.23
// none, 1.24 only bypass-inbound-capture, 1.25 on all three; the table is checked against the
// pinned net.go facts in test/meshes/istio-cni-annotation-reads.test.ts). Each tag's `default`
// golden is what that tag writes for a pod carrying only annotations it does not read: given
// `--istio-cni-version TAG`, explain passes it; read as the newest istio-cni would, it fails.
const namespace = makeNamespace('amb-versions');
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-ambient-versions-'));
afterAll(() => {
  removeNamespace(namespace);
  rmSync(scratch, { recursive: true, force: true });
});

const ALL = Object.keys(NAMES) as AmbientPodAnnotation[];
const versionFlag = (tag: string) => `--istio-cni-version=${tag}`;

/** The annotations `tag` ignores, each set to change the newest reading's rules for this golden. */
function ignoredAnnotations(golden: AmbientGolden): Record<string, string> {
  const reads = ambientAnnotationsRead([1, Number(golden.tag.split('.')[1])]);
  const values: Record<AmbientPodAnnotation, string> = {
    bypassInboundCapture: 'true',
    dnsCapture: golden.text.includes('15053') ? 'false' : 'true',
    rerouteVirtualInterfaces: 'fake1s0f0',
  };
  return Object.fromEntries(ALL.filter((key) => !reads.has(key)).map((key) => [NAMES[key], values[key]]));
}

function annotationsFile(golden: AmbientGolden, annotations: Record<string, string>): string {
  const file = path.join(scratch, `${golden.tag}-${golden.name}.annotations`);
  writeFileSync(
    file,
    Object.entries(annotations)
      .map(([key, value]) => `${key}=${JSON.stringify(value)}\n`)
      .join(''),
  );
  return file;
}

const tagged = ambientGoldens().filter(
  (golden) => /^1\.\d+\.0$/.test(golden.tag) && golden.backend === 'iptables' && golden.name === 'default',
);

describe("explain reads an ambient pod's annotations as the istio-cni of --istio-cni-version does", () => {
  it('covers every released tag of the fixtures', () => expect(tagged.map((golden) => golden.tag)).toHaveLength(9));

  for (const golden of tagged)
    it(`${golden.tag}: its default golden, the annotations it ignores on the pod`, async () => {
      const ignored = ignoredAnnotations(golden);
      const dump = dumpGolden(namespace, golden, 'nft', scratch);
      const annotated = ['--pod-annotations', annotationsFile(golden, ignored), ...dump.files];
      const asTag = await runExplain(
        [...goldenFlags(golden), versionFlag(golden.tag), ...annotated],
        goldenEnv(golden),
      );
      expect(asTag.stdout + asTag.stderr).toContain('PASSED');
      expect(asTag.exitCode).toBe(0);
      if (Object.keys(ignored).length === 0) return;
      // The newest istio-cni reads them: the same rules then miss (or exceed) what they ask for.
      const asNewest = await runExplain([...goldenFlags(golden), ...annotated], goldenEnv(golden));
      expect(asNewest.exitCode, asNewest.stdout).toBe(126);
    });

  it('1.24.0: bypass-inbound-capture is read there (its ingress golden passes with --istio-cni-version 1.24)', async () => {
    const golden = ambientGoldens().find(
      (g) => g.tag === '1.24.0' && g.backend === 'iptables' && g.name === 'ingress',
    )!;
    const flags = goldenFlags(golden).filter((flag) => !flag.startsWith('--include-inbound-ports='));
    const file = annotationsFile(golden, { [NAMES.bypassInboundCapture]: 'true' });
    const dump = dumpGolden(namespace, golden, 'nft', scratch);
    const pass = await runExplain(
      [...flags, versionFlag('1.24'), '--pod-annotations', file, ...dump.files],
      goldenEnv(golden),
    );
    expect(pass.exitCode, pass.stdout).toBe(0);
    const older = await runExplain(
      [...flags, versionFlag('1.23'), '--pod-annotations', file, ...dump.files],
      goldenEnv(golden),
    );
    expect(older.exitCode, older.stdout).toBe(126);
  });
});
