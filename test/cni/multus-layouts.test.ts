import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { CniVerdict } from '../../src/cni/audit-cni.js';
import { runCniCheck } from '../../src/cli/commands/cni-check/run.js';
import { nodeConfigOf } from '../../src/cli/commands/node/config.js';
import { runCniAudit } from '../../src/cni/run-cni-audit.js';
import { fixture } from './listing.js';

/**
 * Real node layouts, written as configuration directories: upstream's Multus v4.3.0 thin and
 * thick files, Istio 1.30.3's non-chained OpenShift conf and Kuma 2.14.3's chart conf
 * (test/fixtures/cni/layouts/sources.json), with the stand-in plugin binary under every type.
 */
const STANDIN = fileURLToPath(new URL('../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const layout = (path: string) => readFile(new URL(`../fixtures/cni/layouts/${path}`, import.meta.url), 'utf8');
const THIN = 'multus/v4.3.0/70-multus.conf';
const SHIM = 'multus/v4.3.0/00-multus.conf';
const PLUGINS = ['calico', 'portmap', 'bandwidth', 'flannel', 'linkerd-cni', 'multus-shim'];
/** Multus answers VERSION with libcni's version.All: its upstream thin file sets no cniVersion (0.1.0). */
const MULTUS =
  '#!/bin/sh\necho \'{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0"]}\'\n';

let root = '';
let count = 0;
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

interface Node {
  readonly conf: Record<string, string>;
  readonly multus?: Record<string, string>;
  readonly plugins?: readonly string[];
  readonly meshPlugin?: string;
}

async function audit(node: Node): Promise<CniVerdict> {
  const { confDir, binDir, multusConfDir } = await nodeDirs(node);
  const verdict = await runCniAudit({
    confDir,
    binDirs: [binDir],
    runtime: 'containerd',
    meshPlugin: node.meshPlugin ?? 'linkerd-cni',
    multusConfDir,
  });
  if (!verdict.ok) throw new Error(verdict.error.message);
  return verdict.value;
}

/** A node whose files may name its own directories (Multus's confDir is a path). */
async function auditAt(
  make: (dirs: { confDir: string }) => { conf: Record<string, Promise<string> | string> },
): Promise<CniVerdict> {
  root ||= await mkdtemp(join(tmpdir(), 'interlock-multus-'));
  const confDir = join(root, String(count), 'net.d');
  const { conf } = make({ confDir });
  const files = Object.fromEntries(
    await Promise.all(Object.entries(conf).map(async ([name, text]) => [name, await text] as const)),
  );
  return audit({ conf: files });
}

async function nodeDirs(node: Node): Promise<{ confDir: string; binDir: string; multusConfDir: string }> {
  root ||= await mkdtemp(join(tmpdir(), 'interlock-multus-'));
  const base = join(root, String(count++));
  const confDir = join(base, 'net.d');
  const multusConfDir = join(base, 'multus', 'net.d');
  const binDir = join(base, 'bin');
  for (const dir of [confDir, binDir]) await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(node.conf)) await writeFile(join(confDir, name), text);
  if (node.multus) {
    await mkdir(multusConfDir, { recursive: true });
    for (const [name, text] of Object.entries(node.multus)) await writeFile(join(multusConfDir, name), text);
  }
  for (const type of node.plugins ?? PLUGINS) await copyFile(STANDIN, join(binDir, type));
  await writeFile(join(binDir, 'multus'), MULTUS, { mode: 0o755 });
  return { confDir, binDir, multusConfDir };
}

const codes = (verdict: CniVerdict) => verdict.findings.map((finding) => `${finding.severity}:${finding.code}`);
/** The upstream file with one key changed, as an operator's configuration would change it. */
const withKeys = async (path: string, keys: Record<string, unknown>) =>
  JSON.stringify({ ...(JSON.parse(await layout(path)) as object), ...keys });

describe('Multus thick (the daemon-generated multus-shim file)', () => {
  it('its clusterNetwork chains the mesh plugin: healthy, judged on the delegate', async () => {
    const verdict = await audit({
      conf: { '00-multus.conf': await layout(SHIM), '10-calico.conflist': fixture('10-calico-linkerd.conflist') },
    });
    expect(codes(verdict)).toEqual([]);
    expect(verdict).toMatchObject({
      healthy: true,
      loads: { file: '00-multus.conf', chain: ['multus-shim'] },
      delegate: { file: '10-calico.conflist', chain: ['calico', 'portmap', 'bandwidth', 'linkerd-cni'] },
    });
  });

  it('the delegate without the mesh plugin: MeshMissing names the delegate file', async () => {
    const verdict = await audit({
      conf: { '00-multus.conf': await layout(SHIM), '10-calico.conflist': fixture('10-calico.conflist') },
    });
    expect(codes(verdict)).toEqual(['error:MeshMissing']);
    expect(verdict.findings[0]).toMatchObject({ file: '10-calico.conflist' });
    expect(verdict.findings[0]?.message).toContain(
      "containerd loads 00-multus.conf, Multus's own file, which delegates the pods' primary network to 10-calico.conflist, whose chain [calico, portmap, bandwidth] has no linkerd-cni",
    );
  });

  it('the delegate file missing: MultusDelegateMissing names it', async () => {
    const verdict = await audit({
      conf: { '00-multus.conf': await layout(SHIM), '20-calico.conflist': fixture('10-calico-linkerd.conflist') },
    });
    expect(verdict.healthy).toBe(false);
    expect(codes(verdict)).toEqual(['error:MultusDelegateMissing']);
    expect(verdict.findings[0]).toMatchObject({ file: '10-calico.conflist' });
    expect(verdict.findings[0]?.message).toContain('10-calico.conflist, which is not in');
  });

  it('a shim without clusterNetwork: the first other file of the directory, not Multus own', async () => {
    const shim = await withKeys(SHIM, { clusterNetwork: undefined });
    const healthy = await audit({
      conf: { '00-multus.conf': shim, '10-calico.conflist': fixture('10-calico-linkerd.conflist') },
    });
    expect(healthy).toMatchObject({ healthy: true, delegate: { file: '10-calico.conflist' } });
    const broken = await audit({
      conf: { '00-multus.conf': shim, '10-calico.conflist': fixture('10-calico.conflist') },
    });
    expect(codes(broken)).toEqual(['error:MeshMissing']);
    const alone = await audit({ conf: { '00-multus.conf': shim } });
    expect(codes(alone)).toEqual(['error:MultusDelegateMissing']);
  });
});

describe('Multus thin (type multus)', () => {
  it("upstream's inline delegates[0] (flannel, portmap) has no mesh plugin: MeshMissing says so", async () => {
    const verdict = await audit({ conf: { '70-multus.conf': await layout(THIN) } });
    expect(codes(verdict)).toEqual(['error:MeshMissing']);
    expect(verdict.findings[0]?.message).toContain(
      'to its inline delegates[0] (network "default-cni-network"), whose chain [flannel, portmap] has no linkerd-cni',
    );
  });

  it("clusterNetwork naming a network a file of Multus's confDir carries: judged on that file, healthy with the mesh chained", async () => {
    // Multus looks the name up in its confDir (pkg/k8sclient getNetDelegate, v4.2.2): here the runtime's.
    const thin = (confDir: string) => withKeys(THIN, { clusterNetwork: 'k8s-pod-network', confDir });
    const healthy = await auditAt((dirs) => ({
      conf: { '70-multus.conf': thin(dirs.confDir), '80-calico.conflist': fixture('10-calico-linkerd.conflist') },
    }));
    expect(healthy).toMatchObject({ healthy: true, findings: [] });
    expect(healthy.delegate?.file).toMatch(/\/net\.d\/80-calico\.conflist$/);
    const broken = await auditAt((dirs) => ({
      conf: { '70-multus.conf': thin(dirs.confDir), '80-calico.conflist': fixture('10-calico.conflist') },
    }));
    expect(codes(broken)).toEqual(['error:MeshMissing']);
    expect(broken.findings[0]?.file).toMatch(/\/net\.d\/80-calico\.conflist$/);
    const missing = await auditAt((dirs) => ({ conf: { '70-multus.conf': thin(dirs.confDir) } }));
    expect(codes(missing)).toEqual(['error:MultusDelegateMissing']);
    expect(missing.findings[0]).toMatchObject({ file: 'k8s-pod-network' });
  });

  it("clusterNetwork naming a network with confDir unset: looked up in Multus's directory, not the runtime's", async () => {
    const thin = await withKeys(THIN, { clusterNetwork: 'k8s-pod-network' });
    // Real Multus fails every ADD here: the file is in the runtime's directory, not in /etc/cni/multus/net.d.
    const beside = await audit({
      conf: { '70-multus.conf': thin, '80-calico.conflist': fixture('10-calico-linkerd.conflist') },
      multus: {},
    });
    expect(codes(beside)).toEqual(['error:MultusDelegateMissing']);
    expect(beside.findings[0]?.message).toMatch(
      /names clusterNetwork k8s-pod-network: .*, and no file of \S*multus\/net\.d carries/,
    );
    const there = await audit({
      conf: { '70-multus.conf': thin },
      multus: { '80-calico.conflist': fixture('10-calico-linkerd.conflist') },
    });
    expect(there).toMatchObject({ healthy: true, findings: [] });
    expect(there.delegate?.file).toMatch(/\/multus\/net\.d\/80-calico\.conflist$/);
  });

  it('clusterNetwork without a kubeconfig: thin Multus resolves it only through the API and ignores its delegates', async () => {
    const thin = await withKeys(THIN, { clusterNetwork: '/etc/cni/net.d/80-calico.conflist', kubeconfig: undefined });
    const verdict = await audit({
      conf: { '70-multus.conf': thin, '80-calico.conflist': fixture('10-calico-linkerd.conflist') },
    });
    expect(codes(verdict)).toEqual(['error:MultusDelegateMissing']);
    expect(verdict.findings[0]?.message).toContain('no kubeconfig');
  });
});

describe('a non-chained mesh plugin: its own attachment in Multus directory', () => {
  const openshift = async () => ({
    '00-multus.conf': await layout(SHIM),
    '10-calico.conflist': fixture('10-calico.conflist'),
  });

  it("Istio's OpenShift profile (istio-cni.conf, chained false): judged as the attachment, healthy", async () => {
    const verdict = await audit({
      conf: await openshift(),
      multus: { 'istio-cni.conf': await layout('istio/1.30.3/istio-cni.conf') },
      plugins: [...PLUGINS, 'istio-cni'],
      meshPlugin: 'istio-cni',
    });
    expect(codes(verdict)).toEqual([]);
    expect(verdict.healthy).toBe(true);
    expect(verdict.attachment).toMatch(/multus\/net\.d\/istio-cni\.conf$/);
  });

  it("Kuma's chart default (kuma-cni.conf, chained false): healthy", async () => {
    const verdict = await audit({
      conf: { '10-calico.conflist': fixture('10-calico.conflist') },
      multus: { 'kuma-cni.conf': await layout('kuma/2.14.3/kuma-cni.conf') },
      plugins: [...PLUGINS, 'kuma-cni'],
      meshPlugin: 'kuma-cni',
    });
    expect(codes(verdict)).toEqual([]);
    expect(verdict.attachment).toMatch(/kuma-cni\.conf$/);
  });

  it('the attachment conf missing: MeshMissing still fires', async () => {
    const verdict = await audit({
      conf: await openshift(),
      multus: {},
      plugins: [...PLUGINS, 'istio-cni'],
      meshPlugin: 'istio-cni',
    });
    expect(codes(verdict)).toEqual(['error:MeshMissing']);
  });

  it('the attachment there but its plugin binary missing: PluginMissing names the attachment', async () => {
    const verdict = await audit({
      conf: await openshift(),
      multus: { 'kuma-cni.conf': await layout('kuma/2.14.3/kuma-cni.conf') },
      meshPlugin: 'kuma-cni',
    });
    expect(codes(verdict)).toEqual(['error:PluginMissing']);
    expect(verdict.findings[0]?.file).toMatch(/multus\/net\.d\/kuma-cni\.conf$/);
  });
});

describe('the commands read Multus directory from --cni-multus-conf-dir', () => {
  const istio = async (): Promise<Node> => ({
    conf: { '00-multus.conf': await layout(SHIM), '10-calico.conflist': fixture('10-calico.conflist') },
    multus: { 'istio-cni.conf': await layout('istio/1.30.3/istio-cni.conf') },
    plugins: [...PLUGINS, 'istio-cni'],
  });

  it('cni-check: exit 0 with the attachment directory, 126 (MeshMissing) without it', async () => {
    const { confDir, binDir, multusConfDir } = await nodeDirs(await istio());
    const argv = ['--mesh', 'istio', '--cni-conf-dir', confDir, '--cni-bin-dir', binDir];
    const env = {};
    const judged = await runCniCheck([...argv, '--cni-multus-conf-dir', multusConfDir], env);
    expect(judged.stdout).toContain('istio-cni is a network attachment of its own:');
    expect(judged.exitCode).toBe(0);
    const elsewhere = await runCniCheck([...argv, '--cni-multus-conf-dir', join(confDir, 'absent')], env);
    expect(elsewhere.exitCode).toBe(126);
    expect(elsewhere.stdout).toContain('MeshMissing');
  });

  it("the node agent's --cni-audit takes it too", () => {
    const config = nodeConfigOf(
      ['--node-name', 'n', '--mesh', 'istio', '--cni-audit', '--cni-multus-conf-dir', '/host/etc/cni/multus/net.d'],
      {},
    );
    expect(typeof config === 'string' ? config : config.cniAudit?.multusConfDir).toBe('/host/etc/cni/multus/net.d');
  });
});
