import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../src/cli/commands/manifest/run.js';

/**
 * `kustomize edit set image` over `interlock manifest`: the real kustomize (kubectl's, installed by
 * scripts/ensure-kubectl.sh; INTERLOCK_KUBECTL names another, such as the cluster's) renders a
 * kustomization whose `images:` moves Interlock's image to a mirror. Kustomize rewrites only the
 * containers' `image:` fields, so the old reference must be nowhere else: not in the webhook's
 * args (the image it injects), the agent's (the repository it trusts) or the install record.
 */
const KUBECTL = process.env.INTERLOCK_KUBECTL ?? 'kubectl';
const OLD = 'registry.example/interlock';
const NEW = 'mirror.example/platform/interlock';
const dir = mkdtempSync(join(tmpdir(), 'interlock-kustomize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function kustomized(name: string, argv: string[]): Promise<string> {
  const printed = await runManifest([...argv, '--image', `${OLD}:1.0.0`], {});
  expect(printed.exitCode, printed.stderr).toBe(0);
  const base = join(dir, name);
  rmSync(base, { recursive: true, force: true });
  spawnSync('mkdir', ['-p', base]);
  writeFileSync(join(base, 'interlock.yaml'), printed.stdout);
  writeFileSync(
    join(base, 'kustomization.yaml'),
    `resources:\n  - interlock.yaml\nimages:\n  - name: ${OLD}\n    newName: ${NEW}\n    newTag: 2.0.0\n`,
  );
  const run = spawnSync(KUBECTL, ['kustomize', base], { encoding: 'utf8', timeout: 30_000 });
  expect(run.error, `${KUBECTL} kustomize`).toBeUndefined();
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
}

const containersOf = (rendered: string, kind: string) =>
  parseAllDocuments(rendered)
    .map((document) => document.toJS() as { kind: string; spec: { template: { spec: { containers: unknown[] } } } })
    .filter((document) => document.kind === kind)
    .flatMap((document) => document.spec.template.spec.containers as { image: string; args: string[] }[]);

describe("kustomize's images: over interlock manifest", () => {
  it('leaves no old image anywhere in the webhook: the image it injects is the one it runs', async () => {
    const rendered = await kustomized('webhook', ['--webhook']);
    expect(containersOf(rendered, 'Deployment').map((container) => container.image)).toEqual([`${NEW}:2.0.0`]);
    expect(rendered).not.toContain(OLD);
  });

  it('leaves no old image anywhere in the node agent: the repository it trusts is the one it runs', async () => {
    const rendered = await kustomized('node-agent', ['--node-agent', '--mesh', 'linkerd']);
    expect(containersOf(rendered, 'DaemonSet').map((container) => container.image)).toEqual([`${NEW}:2.0.0`]);
    expect(rendered).not.toContain(OLD);
  });

  it('leaves no old image anywhere in the ambient webhook', async () => {
    expect(await kustomized('ambient', ['--webhook', '--mesh', 'istio-ambient'])).not.toContain(OLD);
  });
});
