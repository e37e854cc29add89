import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { formatCommandHelp } from '../../src/cli/help.js';
import { MANIFEST_FLAGS } from '../../src/cli/commands/manifest/flags.js';
import { MODE_FLAGS, runManifest } from '../../src/cli/commands/manifest/run.js';
import { MAX_INPUT_BYTES } from '../../src/cli/input/read-input-file.js';
import { MAX_MANIFEST_BYTES, mebibytes, readManifestFile } from '../../src/cli/input/read-manifest-input.js';

const dir = mkdtempSync(path.join(tmpdir(), 'interlock-help-truth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const help = (name: string) =>
  formatCommandHelp(
    COMMANDS.find((spec) => spec.name === name)!,
    1000,
  );
const sizes = (text: string) => [...new Set(text.match(/\d+ MiB/g) ?? [])];

describe('help says what the code does', () => {
  it('every size inject --help names is the cap inject enforces', () => {
    expect(sizes(help('inject'))).toEqual([mebibytes(MAX_MANIFEST_BYTES)]);
    const file = path.join(dir, 'big.yaml');
    writeFileSync(file, '');
    truncateSync(file, MAX_MANIFEST_BYTES + 1);
    const read = readManifestFile(file);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.error.message).toContain(mebibytes(MAX_MANIFEST_BYTES));
    truncateSync(file, MAX_MANIFEST_BYTES);
    expect(readManifestFile(file).ok).toBe(true);
  });

  it('every size explain --help names is the cap explain enforces', () => {
    expect(sizes(help('explain'))).toEqual([mebibytes(MAX_INPUT_BYTES)]);
  });

  it("manifest's summary names the init container, what it prints by default", async () => {
    const run = await runManifest(['--mesh', 'linkerd', '--image', 'registry.example/interlock:1.0'], {});
    expect(run.exitCode).toBe(0);
    expect(run.stdout).not.toMatch(/^kind:/m);
    expect(run.stdout).toMatch(/^name: linkerd-network-validator$/m);
    expect(help('manifest').split('\n')[2]).toMatch(/init container/);
    expect(help('manifest').split('\n')[2]).not.toMatch(/^Print the Kubernetes objects/);
  });

  it('--mesh is said to be required only where it is taken', async () => {
    const meshHelp = MANIFEST_FLAGS.find((flag) => flag.name === 'mesh')!.help;
    expect(meshHelp).not.toMatch(/required by manifest\b/);
    for (const [mode, flags] of Object.entries(MODE_FLAGS)) {
      if (flags.includes('mesh')) continue;
      const run = await runManifest([`--${mode}`, '--mesh', 'linkerd'], {});
      expect(run.exitCode, mode).toBe(64);
    }
  });
});
