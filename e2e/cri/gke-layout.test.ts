import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGolden } from '../../test/harness/golden.js';
import { run } from '../cni/containerd-node.js';
import { containerdConfig } from './cri-node.js';
import { CriClient } from './cri-client.js';
import { conflist, meshPlugin, portmap } from './scenario.js';

// A GKE node's layout: containerd's CRI plugin runs the CNI plugins from /home/kubernetes/bin
// (GKE's bin dir: istio/istio 1.30.3 manifests/charts/istio-cni/templates/daemonset.yaml, lines
// 8-11, commit 56df41f63e513f834c9a3af33d8aed82d1d961f2, the bin dir it picks on a "-gke"
// cluster). The real containerd of the machine, configured so, in a private mount namespace
// whose /home is a tmpfs (the machine's /home is untouched) and an empty network namespace;
// cni-check runs in the same mount namespace, so it sees the same /home/kubernetes/bin.
const REPO = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const CLI = join(REPO, 'dist/cli/main.js');
const STANDIN = join(REPO, 'test/fixtures/cni/mesh-cni-standin.mjs');
const GKE_BIN = '/home/kubernetes/bin';

let root: string;
let daemon: ChildProcess | undefined;
let cri: CriClient | undefined;

beforeAll(async () => {
  root = await mkdtemp('/tmp/interlock-cri-gke-');
  const socket = join(root, 'containerd.sock');
  await mkdir(join(root, 'net.d'));
  await writeFile(
    join(root, 'net.d', '10-gke.conflist'),
    conflist([
      { type: 'bridge', bridge: 'ilkgke0', ipam: { type: 'host-local', subnet: '10.214.0.0/24' } },
      portmap,
      meshPlugin('linkerd'),
    ]),
  );
  const config = containerdConfig(root, socket, 'ilk-cri-gke', { binDir: GKE_BIN, confDir: join(root, 'net.d') });
  await writeFile(join(root, 'containerd.toml'), config);
  const setup = [
    'set -e',
    'ip link set lo up',
    'mount -t tmpfs interlock-gke-home /home',
    `mkdir -p ${GKE_BIN}`,
    `for p in bridge host-local loopback portmap; do cp /usr/lib/cni/$p ${GKE_BIN}/$p; done`,
    `cp ${STANDIN} ${GKE_BIN}/linkerd-cni && chmod 755 ${GKE_BIN}/linkerd-cni`,
    'mount -t tmpfs interlock-gke-run /run/containerd 2>/dev/null || { mkdir -p /run/containerd && mount -t tmpfs interlock-gke-run /run/containerd; }',
    // containerd's default socket path, in this mount namespace only: what cni-check asks unflagged.
    `ln -s ${socket} /run/containerd/containerd.sock`,
    `exec containerd --config ${root}/containerd.toml`,
  ].join('\n');
  const log = openSync(join(root, 'containerd.log'), 'a');
  daemon = spawn('unshare', ['-m', '-n', '--propagation', 'private', 'sh', '-c', setup], {
    stdio: ['ignore', 'ignore', log],
    detached: true,
  });
  closeSync(log);
  cri = CriClient.connect(socket);
  for (let i = 0; i < 300; i++) {
    if (daemon.exitCode !== null) break;
    if (existsSync(socket) && (await cri.call('Version', {}, 2000).catch(() => undefined))) return;
    await sleep(100);
  }
  throw new Error(`containerd did not start:\n${readFileSync(join(root, 'containerd.log'), 'utf8').slice(-3000)}`);
}, 120_000);

afterAll(async () => {
  cri?.close();
  if (daemon && daemon.exitCode === null) {
    daemon.kill('SIGTERM');
    for (let i = 0; i < 50 && daemon.exitCode === null; i++) await sleep(100);
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
  }
  if (root) await rm(root, { recursive: true, force: true });
});

/** cni-check in containerd's mount namespace: /home/kubernetes/bin is there and nowhere else. */
async function cniCheck(...args: string[]) {
  const pid = String(daemon?.pid);
  const argv = ['cni-check', '--mesh', 'linkerd', '--version-timeout', '20s', '--format', 'json', ...args];
  const result = await run('nsenter', [`--mount=/proc/${pid}/ns/mnt`, 'node', CLI, ...argv], { timeoutMs: 90_000 });
  try {
    const verdict = JSON.parse(result.stdout) as { findings: Array<{ code: string; message: string }> };
    return { exitCode: result.exitCode, codes: verdict.findings.map((finding) => finding.code), verdict };
  } catch {
    throw new Error(`cni-check exit ${result.exitCode}: ${result.stdout}${result.stderr}`);
  }
}

describe('a GKE node: plugins in /home/kubernetes/bin', () => {
  it('containerd reports the bin dir; cni-check --cri-endpoint finds the plugins there, the default guess does not', async () => {
    const status = await cri?.call('Status', { verbose: true });
    const info = status?.['info'] as Record<string, string>;
    const captured = {
      containerd: (await run('containerd', ['--version'])).stdout.trim(),
      info: { cniconfig: info['cniconfig'], lastCNILoadStatus: info['lastCNILoadStatus'] },
      confDir: join(root, 'net.d'),
      files: { '10-gke.conflist': await readFile(join(root, 'net.d', '10-gke.conflist'), 'utf8') },
    };
    const text = `${JSON.stringify(captured, null, 1)}\n`.replaceAll(root, '<node-root>').replaceAll(REPO, '<repo>');
    expectGolden(join(REPO, 'test/fixtures/cni/cri-status/gke-layout.json'), text);
    expect(JSON.parse(info['cniconfig'] as string)).toMatchObject({ PluginDirs: [GKE_BIN] });

    const guessed = await cniCheck('--cni-conf-dir', join(root, 'net.d'), '--cri-endpoint', 'none');
    expect(guessed.exitCode).toBe(95);
    expect(guessed.codes).toContain('PluginMissing');

    const asked = await cniCheck('--cri-endpoint', `unix://${join(root, 'containerd.sock')}`);
    expect(asked.codes).toEqual([]);
    expect(asked.exitCode).toBe(0);
    expect(asked.verdict).toMatchObject({
      dir: join(root, 'net.d'),
      observed: { pluginDirs: [GKE_BIN], agrees: true },
    });

    // The operator's own --cni-bin-dir wins, and where it is not containerd's, that is a finding.
    const named = await cniCheck(
      '--cri-endpoint',
      `unix://${join(root, 'containerd.sock')}`,
      '--cni-bin-dir',
      '/opt/cni/bin',
    );
    expect(named.codes).toEqual(expect.arrayContaining(['PluginMissing', 'RuntimeDisagrees']));
    expect(named.verdict.findings.find((finding) => finding.code === 'RuntimeDisagrees')?.message).toMatch(
      /^containerd looks for plugin binaries in \/home\/kubernetes\/bin, not in \/opt\/cni\/bin/,
    );
  });

  it('no flag at all: containerd on its default socket is asked, and its directories are judged', async () => {
    const asked = await cniCheck();
    expect(asked.codes).toEqual([]);
    expect(asked.exitCode).toBe(0);
    expect(asked.verdict).toMatchObject({
      dir: join(root, 'net.d'),
      observed: { confDir: join(root, 'net.d'), pluginDirs: [GKE_BIN], agrees: true },
    });
  });

  it('no runtime answering: the guessed directories are judged, and the warning names each socket tried', async () => {
    const empty = join(root, 'no-runtime-here');
    await mkdir(empty, { recursive: true });
    const fallback = await cniCheck('--cni-conf-dir', join(root, 'net.d'), '--host-root', empty);
    expect(fallback.codes).toContain('RuntimeUnobserved');
    expect(fallback.verdict.findings.find((finding) => finding.code === 'RuntimeUnobserved')?.message).toContain(
      `no container runtime answered the CRI Status on ${empty}/run/containerd/containerd.sock (no socket there), ${empty}/var/run/crio/crio.sock (no socket there)`,
    );
  });

  it("broken: the mesh plugin gone from containerd's bin dir is PluginMissing, flags or none", async () => {
    const pid = String(daemon?.pid);
    const inNamespace = (command: string) => run('nsenter', [`--mount=/proc/${pid}/ns/mnt`, 'sh', '-c', command]);
    await inNamespace(`mv ${GKE_BIN}/linkerd-cni ${GKE_BIN}/linkerd-cni.away`);
    try {
      const broken = await cniCheck();
      expect(broken.exitCode).toBe(95);
      expect(broken.verdict.findings).toContainEqual(
        expect.objectContaining({ code: 'PluginMissing', message: expect.stringContaining(GKE_BIN) }),
      );
    } finally {
      await inNamespace(`mv ${GKE_BIN}/linkerd-cni.away ${GKE_BIN}/linkerd-cni`);
    }
  });
});
