import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCniCheck } from '../../../../src/cli/commands/cni-check/run.js';
import { conflist } from '../../../cni/listing.js';

const STANDIN = fileURLToPath(new URL('../../../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));

let root: string;
let confDir: string;
let binDir: string;
const check = async (runtime: string) => {
  const result = await runCniCheck(
    ['--mesh', 'linkerd', '--runtime', runtime, '--cni-conf-dir', confDir, '--cni-bin-dir', binDir, '--format', 'json'],
    {},
  );
  const verdict = JSON.parse(result.stdout) as { findings: Array<{ code: string; file?: string; message: string }> };
  return { exitCode: result.exitCode, findings: verdict.findings };
};

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'cni-words-'));
  confDir = join(root, 'net.d');
  binDir = join(root, 'bin');
  await mkdir(confDir);
  await mkdir(binDir);
  for (const type of ['calico', 'linkerd-cni']) await copyFile(STANDIN, join(binDir, type));
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('cni-check never contradicts itself within a run', () => {
  it('CRI-O skipping every file is not also said to "not get to" one of them', async () => {
    // Both name a plugin with no binary: CRI-O validates each, skips both, and loads nothing.
    await writeFile(join(confDir, '10-old.conflist'), conflist('old', ['weave-net']));
    await writeFile(join(confDir, '20-older.conflist'), conflist('older', ['gone-cni']));
    const { exitCode, findings } = await check('crio');
    expect(exitCode).toBe(95);
    const text = findings.map((finding) => finding.message).join('\n');
    expect(text).toContain('CRI-O skips every file');
    expect(text).not.toContain('does not get to');
    // Each skipped file is told once, in the words of what CRI-O does with it.
    for (const file of ['10-old.conflist', '20-older.conflist']) expect(text.split(file).length - 1, file).toBe(1);
  });

  it('CRI-O skipping a leftover file while another wins: skipped, never "pods would get no sandbox"', async () => {
    await writeFile(join(confDir, '05-old.conflist'), conflist('old', ['weave-net']));
    await writeFile(join(confDir, '10-calico.conflist'), conflist('k8s-pod-network', ['calico', 'linkerd-cni']));
    const { exitCode, findings } = await check('crio');
    expect(exitCode).toBe(0);
    const about = findings.filter((finding) => finding.message.includes('05-old.conflist'));
    expect(about.map((finding) => finding.code)).toEqual(['PassedOver']);
    expect(about[0]?.message).toMatch(/^CRI-O skips 05-old\.conflist/);
  });

  it('containerd, which loads the first file and never skips one, still warns of a leftover after the winner', async () => {
    await writeFile(join(confDir, '10-calico.conflist'), conflist('k8s-pod-network', ['calico', 'linkerd-cni']));
    await writeFile(join(confDir, '20-old.conflist'), conflist('old', ['weave-net']));
    const { exitCode, findings } = await check('containerd');
    expect(exitCode).toBe(0);
    expect(findings.map((finding) => finding.code)).toContain('Leftover');
    expect(findings.find((finding) => finding.code === 'Leftover')?.message).toContain(
      'containerd does not load it while 10-calico.conflist wins',
    );
  });
});
