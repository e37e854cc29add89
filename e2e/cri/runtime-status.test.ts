import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectGolden } from '../../test/harness/golden.js';
import { run } from '../cni/containerd-node.js';
import type { CriNode } from './cri-node.js';
import { bridge, conflist, meshPlugin, portmap } from './scenario.js';
import { startNode } from './suite-node.js';

// The audit's prediction against what containerd's CRI plugin says it loaded (verbose Status,
// `crictl info`'s cniconfig and lastCNILoadStatus), on the real containerd 1.6 of the machine.
// Each state's answer is recorded as a fixture (test/fixtures/cni/cri-status/) that the unit
// tests of the parser and of the comparison read: the node's temp root and this checkout's path
// are the only parts replaced, by <node-root> and <repo>, so a re-run reproduces the file.
const REPO = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const FIXTURES = join(REPO, 'test/fixtures/cni/cri-status');
const CLI = join(REPO, 'dist/cli/main.js');

let node: CriNode;
const temps: string[] = [];
beforeAll(async () => {
  node = await startNode();
}, 300_000);
afterAll(async () => {
  await node?.stop();
});
afterEach(async () => {
  await node.clearConfigs();
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

const withMesh = (index: number) => conflist([bridge(node, index), portmap, meshPlugin('linkerd')]);

interface Verdict {
  readonly healthy: boolean;
  readonly dir: string;
  readonly loads?: { readonly file: string };
  readonly observed?: { readonly agrees: boolean; readonly pluginDirs: readonly string[] };
  readonly findings: ReadonlyArray<{ code: string; severity: string; file?: string; message: string }>;
}

/** The shipped cni-check; the conf and bin dirs only as given (with --cri-endpoint they follow containerd). */
async function cniCheck(...args: string[]): Promise<{ exitCode: number; verdict: Verdict }> {
  const argv = ['cni-check', '--mesh', 'linkerd', '--version-timeout', '20s', '--format', 'json', ...args];
  const result = await run('node', [CLI, ...argv], { timeoutMs: 90_000 });
  try {
    return { exitCode: result.exitCode, verdict: JSON.parse(result.stdout) as Verdict };
  } catch {
    throw new Error(`cni-check exit ${result.exitCode}: ${result.stdout}${result.stderr}`);
  }
}
const endpoint = () => `unix://${node.socket}`;
const codes = (verdict: Verdict) => verdict.findings.map((finding) => finding.code);

/** containerd's answer and the directory it was about, as the fixture the unit tests read. */
async function record(name: string): Promise<void> {
  const status = await node.cri.call('Status', { verbose: true });
  const info = status['info'] as Record<string, string>;
  const files: Record<string, string> = {};
  for (const entry of (await readdir(node.confDir)).sort())
    files[entry] = await readFile(join(node.confDir, entry), 'utf8');
  const captured = {
    containerd: (await run('containerd', ['--version'])).stdout.trim(),
    info: { cniconfig: info['cniconfig'], lastCNILoadStatus: info['lastCNILoadStatus'] },
    confDir: node.confDir,
    files,
  };
  const text = `${JSON.stringify(captured, null, 1)}\n`.replaceAll(node.root, '<node-root>').replaceAll(REPO, '<repo>');
  expectGolden(join(FIXTURES, `${name}.json`), text);
}

describe("cni-check --cri-endpoint: the prediction against containerd's loaded configuration", () => {
  it("agrees on a chained conflist; the plugin directory is containerd's, not the default /opt/cni/bin", async () => {
    await node.writeConfig('10-primary.conflist', withMesh(1));
    await node.waitCniLoaded('ilkcri1');
    await record('conflist-loaded');
    // The GKE case: the runtime's plugins are not where the default looks (GKE: /home/kubernetes/bin).
    const guessed = await cniCheck('--cni-conf-dir', node.confDir);
    expect(codes(guessed.verdict)).toContain('PluginMissing');
    const asked = await cniCheck('--cri-endpoint', endpoint());
    expect(asked.exitCode).toBe(0);
    expect(asked.verdict).toMatchObject({
      healthy: true,
      dir: node.confDir,
      loads: { file: '10-primary.conflist' },
      observed: { agrees: true, pluginDirs: [node.binDir] },
      findings: [],
    });
  });

  it('a file renamed into the directory: containerd still holds the old one, and the finding names both', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(2));
    await node.waitCniLoaded('ilkcri2');
    // An atomic install (write aside, rename in): containerd 1.6's syncer ignores the create event.
    const aside = await mkdtemp(join(node.root, 'aside-'));
    temps.push(aside);
    await writeFile(join(aside, '05-new.conflist'), withMesh(3));
    await rename(join(aside, '05-new.conflist'), join(node.confDir, '05-new.conflist'));
    await sleep(1500);
    expect((await node.cniState()).config).toContain('ilkcri2');
    await record('renamed-in-not-loaded');
    const check = await cniCheck('--cri-endpoint', endpoint());
    expect(check.exitCode).toBe(95);
    expect(check.verdict.loads?.file).toBe('05-new.conflist');
    expect(check.verdict.findings).toEqual([
      expect.objectContaining({
        code: 'RuntimeDisagrees',
        severity: 'error',
        file: '10-primary.conflist',
        message: expect.stringMatching(/containerd loaded 10-primary\.conflist .*the audit predicts 05-new\.conflist/),
      }),
    ]);
    // The next write there reloads it: prediction and runtime agree again.
    await node.writeConfig('05-new.conflist', withMesh(3));
    await node.waitCniLoaded('ilkcri3');
    const after = await cniCheck('--cri-endpoint', endpoint());
    expect(after.exitCode).toBe(0);
    expect(after.verdict.observed?.agrees).toBe(true);
  });

  it('a half-written file: containerd reports its failed load, and so does the audit', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(4));
    await node.waitCniLoaded('ilkcri4');
    await node.writeConfig('00-new.conflist', withMesh(5).slice(0, 90));
    await node.waitCni((state) => !state.networkReady);
    await record('load-failed');
    const check = await cniCheck('--cri-endpoint', endpoint());
    expect(check.exitCode).toBe(95);
    expect(check.verdict.findings).toContainEqual(
      expect.objectContaining({
        code: 'RuntimeLoadFailed',
        message: expect.stringContaining(`failed to load CNI config list file ${node.confDir}/00-new.conflist`),
      }),
    );
  });

  it('a single-plugin .conf: libcni re-encodes it, and the audit still finds its file', async () => {
    await node.writeConfig('10-bridge.conf', JSON.stringify({ cniVersion: '0.4.0', name: 'solo', ...bridge(node, 6) }));
    await node.waitCniLoaded('"Name":"solo"');
    await record('conf-loaded');
    const check = await cniCheck('--cri-endpoint', endpoint());
    expect(codes(check.verdict)).toEqual(['MeshMissing']);
    expect(check.verdict.observed?.agrees).toBe(true);
  });

  it('an empty directory: no network held, the load error reported', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(7));
    await node.waitCniLoaded('ilkcri7');
    await node.clearConfigs();
    await node.waitCni((state) => !state.networkReady);
    await record('no-config');
    const check = await cniCheck('--cri-endpoint', endpoint());
    expect(codes(check.verdict).sort()).toEqual(['NoConfig', 'RuntimeLoadFailed']);
  });

  it('the audit reads another directory than containerd loads: a disagreement naming both', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(8));
    await node.waitCniLoaded('ilkcri8');
    const other = await mkdtemp(join(node.root, 'other-'));
    temps.push(other);
    await writeFile(join(other, '10-primary.conflist'), withMesh(8));
    const check = await cniCheck('--cri-endpoint', endpoint(), '--cni-conf-dir', other, '--cni-bin-dir', node.binDir);
    expect(check.exitCode).toBe(95);
    expect(check.verdict.findings).toEqual([
      expect.objectContaining({
        code: 'RuntimeDisagrees',
        message: expect.stringContaining(
          `containerd loads its CNI configuration from ${node.confDir}, not from ${other}`,
        ),
      }),
    ]);
  });
});
