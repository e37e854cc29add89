import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runInject } from '../../../../src/cli/commands/inject/run.js';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';

const IMAGE = ['--image', 'registry.example.com/mesh-interlock:1'];
const inject = (input: string | Buffer, argv: readonly string[] = ['--mesh', 'linkerd']) =>
  runInject([...argv, ...IMAGE], {}, () => (Buffer.isBuffer(input) ? input : Buffer.from(input)));
const POD =
  'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n  - name: linkerd-init\n    image: i\n  containers: [{name: app, image: app}]\n';

describe('inject on what an operator pipes into it', () => {
  it('binary input is refused (65), never passed through with exit 0', async () => {
    for (const bytes of [Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x00, 0x00]), Buffer.from([0xff, 0xfe, 0x41])]) {
      const run = await inject(bytes);
      expect(run.exitCode).toBe(65);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/ManifestUnparseable: <stdin> is not text/);
    }
  });

  it('--after-container naming no container of the input is said, not ignored', async () => {
    const run = await inject(POD, ['--mesh', 'linkerd', '--after-container', 'nosuch']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: --after-container nosuch: no container of the input has that name/);
    const named = await inject(POD, ['--mesh', 'linkerd', '--after-container', 'linkerd-init']);
    expect(named.stderr).not.toMatch(/after-container/);
  });

  it('a document over 1 MiB with no pod template (a CRD) passes through untouched beside an injected pod', async () => {
    const description = 'x'.repeat(100);
    const properties = Array.from(
      { length: 12_000 },
      (_, i) => `              f${i}: {type: string, description: ${description}}`,
    );
    const crd = `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: big.example.com}\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          spec:\n            properties:\n${properties.join('\n')}\n`;
    expect(crd.length).toBeGreaterThan(1024 * 1024);
    const run = await inject(`${crd}---\n${POD}`);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.startsWith(crd)).toBe(true);
    expect(run.stdout).toMatch(/- name: linkerd-network-validator/);
    expect(run.stderr).toMatch(
      /note: CustomResourceDefinition \(\d+ bytes\) has no pod template; passed through untouched/,
    );
  });

  it('an anchor inject refuses comes with how to expand it', async () => {
    const shared =
      'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: &inits\n  - name: linkerd-init\n    image: i\n  containers: [{name: app, image: app}]\n';
    const run = await inject(shared);
    expect(run.exitCode).toBe(65);
    expect(run.stderr).toMatch(/yq 'explode\(\.\)' FILE \| interlock inject -f -/);
  });

  it("the node agent's own manifest has no anchors for inject to refuse", async () => {
    const printed = await runManifest(['--node-agent', '--mesh', 'linkerd', ...IMAGE], {});
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(printed.stdout).not.toMatch(/[&*]a\d+\b/);
    // Refused for what it is (a hostNetwork DaemonSet), never for how it is written.
    const run = await inject(printed.stdout);
    expect(run.stderr).not.toMatch(/anchor|alias/);
    expect(run.stderr).toMatch(/hostNetwork/);
  });

  it("Linkerd edge-26.8.3's control plane (a scalar anchor in the native linkerd-proxy) is injected, its anchors kept", async () => {
    const file = new URL(
      '../../../fixtures/meshes/linkerd/edge-26.8.3/install_no_init_container.validator-documents.yml',
      import.meta.url,
    );
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/&containerName linkerd-proxy/);
    const run = await inject(text);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.match(/&containerName linkerd-proxy/g)?.length).toBe(
      text.match(/&containerName linkerd-proxy/g)?.length,
    );
    expect(run.stdout).toContain('image: registry.example.com/mesh-interlock:1');
    expect(run.stderr).not.toMatch(/expand it first/);
  });

  it('an anchor inside the validator container itself is still refused, with the how-to', async () => {
    const shared =
      'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n  - name: linkerd-network-validator\n    image: &img x\n  containers: [{name: app, image: *img}]\n';
    const run = await inject(shared);
    expect(run.exitCode).toBe(65);
    expect(run.stderr).toMatch(/anchor or alias in the validator container.*yq 'explode\(\.\)'/);
  });
});
