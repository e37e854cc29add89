import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { MESHES } from '../../../../src/mesh/meshes.js';

// docs/operator.md's "what is installed" line must name every kind any part prints: derived from
// what `manifest` prints for each part and its variants, never from a hand list.
const REPO = join(import.meta.dirname, '../../../..');
const LISTING = /kubectl get (\S+) -A -l app\.kubernetes\.io\/part-of=interlock/;

function documentedListing(): string[] {
  const doc = readFileSync(join(REPO, 'docs/operator.md'), 'utf8');
  const types = LISTING.exec(doc)?.[1];
  if (types === undefined)
    throw new Error('docs/operator.md: no `kubectl get ... -l app.kubernetes.io/part-of=interlock`');
  return types.split(',');
}

type Doc = { apiVersion: string; kind: string };

/** The resource kubectl names a kind by: its lower-case plural, with its API group when not core. */
function resourceOf({ apiVersion, kind }: Doc): { plural: string; group: string } {
  const lower = kind.toLowerCase();
  const plural = lower.endsWith('y') ? `${lower.slice(0, -1)}ies` : lower.endsWith('s') ? `${lower}es` : `${lower}s`;
  return { plural, group: apiVersion.includes('/') ? apiVersion.split('/')[0]! : '' };
}

const VARIANTS: readonly string[][] = [
  ...MESHES.map((mesh) => ['--node-agent', '--mesh', mesh]),
  ['--node-agent', '--mesh', 'linkerd', '--cni-audit', '--report-condition', '--platform', 'openshift'],
  ['--node-agent', '--mesh', 'istio', '--action', 'none'],
  ['--webhook'],
  ['--webhook', '--failure-policy', 'Fail', '--mesh', 'istio-ambient'],
  ['--webhook', '--api-server-cidr', '10.0.0.1/32'],
  ['--rbac', '--namespace', 'shop', '--service-account', 'web'],
  ['--monitoring'],
];

async function printedKinds(): Promise<Doc[]> {
  const seen = new Map<string, Doc>();
  for (const argv of VARIANTS) {
    const outcome = await runManifest(argv, {});
    expect(outcome.exitCode, `${argv.join(' ')}: ${outcome.stderr}`).toBe(0);
    for (const document of parseAllDocuments(outcome.stdout)) {
      const { apiVersion, kind } = document.toJS() as Doc;
      seen.set(`${apiVersion} ${kind}`, { apiVersion, kind });
    }
  }
  return [...seen.values()];
}

describe("docs/operator.md's listing of what is installed", () => {
  it('names every kind manifest prints for any part (cluster-scoped, RBAC, policies, certificates)', async () => {
    const listed = documentedListing();
    const missing = (await printedKinds())
      .map(resourceOf)
      .filter(({ plural, group }) => !listed.includes(plural) && !listed.includes(`${plural}.${group}`))
      .map(({ plural, group }) => (group ? `${plural}.${group}` : plural));
    expect(missing).toEqual([]);
  });

  it('names no kind that no part prints', async () => {
    const printed = (await printedKinds()).map(resourceOf);
    const stray = documentedListing().filter(
      (type) => !printed.some(({ plural, group }) => type === plural || type === `${plural}.${group}`),
    );
    expect(stray).toEqual([]);
  });
});
