import type { Http2Server } from 'node:http2';
import { readFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCniCheck } from '../../../../src/cli/commands/cni-check/run.js';
import { fakeCriStatus } from '../../../harness/fake-cri-status.js';

// cni-check asks the runtime before it judges, with no flag: the runtimes' default sockets under
// --host-root (here a temp directory, so the test never reaches this machine's own runtime).
// containerd's answer is the one the real containerd gave on a GKE layout (bin_dir
// /home/kubernetes/bin: istio/istio 1.30.3 istio-cni chart, test/fixtures/cni/cri-status/README.md),
// its <node-root> placed at /node; CRI-O's is derived from its source (none runs here).
const FIXTURES = fileURLToPath(new URL('../../../fixtures/cni/cri-status/', import.meta.url));
const STANDIN = fileURLToPath(new URL('../../../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
interface Captured {
  readonly info: Record<string, string>;
  readonly files?: Record<string, string>;
}
const captured = (name: string): Captured =>
  JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8').replaceAll('<node-root>', '/node')) as Captured;

interface Verdict {
  readonly healthy: boolean;
  readonly runtime: string;
  readonly dir: string;
  readonly observed?: { readonly pluginDirs: readonly string[]; readonly agrees: boolean };
  readonly findings: ReadonlyArray<{ code: string; severity: string; message: string }>;
}

let root: string;
const servers: Http2Server[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'interlock-ask-runtime-'));
  const gke = captured('gke-layout');
  await mkdir(join(root, 'node/net.d'), { recursive: true });
  for (const [name, text] of Object.entries(gke.files ?? {})) await writeFile(join(root, 'node/net.d', name), text);
  await mkdir(join(root, 'home/kubernetes/bin'), { recursive: true });
  for (const type of ['bridge', 'host-local', 'portmap', 'linkerd-cni']) {
    await copyFile(STANDIN, join(root, 'home/kubernetes/bin', type));
    await chmod(join(root, 'home/kubernetes/bin', type), 0o755);
  }
});
afterEach(async () => {
  for (const server of servers.splice(0)) server.close();
  await rm(root, { recursive: true, force: true });
});

const containerdSocket = () => join(root, 'run/containerd/containerd.sock');
const crioSocket = () => join(root, 'var/run/crio/crio.sock');
async function check(...args: string[]): Promise<{ exitCode: number; verdict: Verdict; text: string }> {
  const argv = ['--mesh', 'linkerd', '--host-root', root, ...args];
  const json = await runCniCheck([...argv, '-o', 'json'], {});
  const text = await runCniCheck(argv, {});
  return { exitCode: json.exitCode, verdict: JSON.parse(json.stdout) as Verdict, text: text.stdout };
}
const codes = (verdict: Verdict) => verdict.findings.map((finding) => finding.code);

describe('cni-check with no flag: the runtime is asked first', () => {
  it('GKE: containerd answers, and its /home/kubernetes/bin is where the plugins are looked up, not /opt/cni/bin', async () => {
    servers.push(await fakeCriStatus(containerdSocket(), captured('gke-layout').info));
    const { exitCode, verdict } = await check();
    expect(codes(verdict)).toEqual([]);
    expect(exitCode).toBe(0);
    expect(verdict).toMatchObject({
      healthy: true,
      runtime: 'containerd',
      dir: join(root, 'node/net.d'),
      observed: { pluginDirs: [join(root, 'home/kubernetes/bin')], agrees: true },
    });
  });

  it("GKE, broken: the mesh plugin absent from the runtime's bin dir is still PluginMissing", async () => {
    servers.push(await fakeCriStatus(containerdSocket(), captured('gke-layout').info));
    await rm(join(root, 'home/kubernetes/bin/linkerd-cni'));
    const { exitCode, verdict } = await check();
    expect(exitCode).toBe(95);
    expect(verdict.findings).toContainEqual(
      expect.objectContaining({
        code: 'PluginMissing',
        message: expect.stringContaining(join(root, 'home/kubernetes/bin')),
      }),
    );
  });

  it('no runtime answers: the guessed directories are used, and a warning names each socket tried', async () => {
    const dirs = ['--cni-conf-dir', join(root, 'node/net.d'), '--cni-bin-dir', join(root, 'home/kubernetes/bin')];
    const { exitCode, verdict, text } = await check(...dirs);
    expect(exitCode).toBe(0);
    expect(verdict.findings).toEqual([
      {
        code: 'RuntimeUnobserved',
        severity: 'warning',
        message: expect.stringMatching(
          new RegExp(
            `^no container runtime answered the CRI Status on ${containerdSocket()} \\(no socket there\\), ${crioSocket()} \\(no socket there\\): the audit judged `,
          ),
        ) as unknown as string,
      },
    ]);
    expect(text).toContain('warning RuntimeUnobserved: no container runtime answered the CRI Status on');
    // Without the guessed directories' plugins the fallback is no pass: the default bin dir is judged.
    const guessed = await check('--cni-conf-dir', join(root, 'node/net.d'));
    expect(codes(guessed.verdict)).toEqual(expect.arrayContaining(['PluginMissing', 'RuntimeUnobserved']));
    expect(guessed.exitCode).toBe(95);
  });

  it('a socket that answers no CRI (a containerd without its CRI plugin) is passed over to the next', async () => {
    servers.push(await fakeCriStatus(containerdSocket(), undefined));
    servers.push(await fakeCriStatus(crioSocket(), captured('crio-1.33.13').info));
    const { verdict } = await check('--cni-conf-dir', join(root, 'node/net.d'));
    expect(verdict.runtime).toBe('crio');
    expect(codes(verdict)).toContain('RuntimeUnobserved');
    // Alone, it is no answer: the fallback's warning quotes what it said.
    servers.pop()?.close();
    const alone = await check(
      '--cni-conf-dir',
      join(root, 'node/net.d'),
      '--cni-bin-dir',
      join(root, 'home/kubernetes/bin'),
    );
    expect(alone.verdict.findings).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringContaining('gRPC status 12: unknown service runtime.v1.RuntimeService'),
      }),
    ]);
  });
});

describe("cni-check and CRI-O's Status, which says nothing of its CNI configuration", () => {
  const dirs = () => ['--cni-conf-dir', join(root, 'node/net.d'), '--cni-bin-dir', join(root, 'home/kubernetes/bin')];

  for (const version of ['crio-1.33.13', 'crio-1.32.0'])
    it(`${version}: CRI-O's rules apply, and RuntimeUnobserved says what its answer lacks, never agreement`, async () => {
      servers.push(await fakeCriStatus(crioSocket(), captured(version).info));
      const { exitCode, verdict } = await check(...dirs());
      expect(exitCode).toBe(0);
      expect(verdict.runtime).toBe('crio');
      expect(verdict.observed).toBeUndefined();
      expect(verdict.findings).toEqual([
        expect.objectContaining({
          code: 'RuntimeUnobserved',
          severity: 'warning',
          message: expect.stringContaining(
            `CRI-O answered on ${crioSocket()}, but CRI-O's verbose Status (info "config": its pause image and, from v1.33, its [crio.runtime] table) carries neither its network_dir, its plugin_dirs nor the networks it loaded`,
          ),
        }),
      ]);
    });

  it("--runtime containerd named, CRI-O answering: the prediction is about another runtime's rules", async () => {
    servers.push(await fakeCriStatus(crioSocket(), captured('crio-1.33.13').info));
    const named = await check(...dirs(), '--runtime', 'containerd', '--cri-endpoint', `unix://${crioSocket()}`);
    expect(named.exitCode).toBe(95);
    expect(named.verdict.findings).toEqual([
      expect.objectContaining({
        code: 'RuntimeDisagrees',
        message: expect.stringContaining(`the runtime on ${crioSocket()} is CRI-O, but the audit applies containerd's`),
      }),
    ]);
  });

  it('an answer of neither shape is an error, never a fallback', async () => {
    servers.push(await fakeCriStatus(containerdSocket(), { golang: 'go1.20' }));
    const { exitCode, verdict } = await check(...dirs());
    expect(exitCode).toBe(95);
    expect(verdict.findings).toEqual([
      expect.objectContaining({
        code: 'RuntimeUnobserved',
        severity: 'error',
        message: expect.stringContaining('neither'),
      }),
    ]);
  });
});
