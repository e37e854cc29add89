import { execFileSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { meshIdentity } from '../../src/mesh/meshes.js';

const STANDIN = fileURLToPath(new URL('../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
/** Debian's containernetworking-plugins (scripts/ensure-containerd.sh). */
const PLUGINS = '/usr/lib/cni';
const PRIMARY = '10-bridge.conflist';
/** Istio's plugin, from its mesh module (the agents in these tests run --mesh istio). */
export const MESH_PLUGIN = meshIdentity('istio').cniPlugin!;

/** The primary's conflist (bridge + host-local), with istio-cni appended as its installer does, or not. */
function primaryConflist(withMesh: boolean): string {
  const bridge = {
    type: 'bridge',
    bridge: 'cni0',
    isGateway: true,
    ipMasq: true,
    ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.0.0/16' }]], routes: [{ dst: '0.0.0.0/0' }] },
  };
  const mesh = {
    name: MESH_PLUGIN,
    type: MESH_PLUGIN,
    log_level: 'info',
    kubernetes: { kubeconfig: '/etc/cni/net.d/ZZZ-istio-cni-kubeconfig' },
  };
  return `${JSON.stringify({ cniVersion: '1.0.0', name: 'bridge-net', plugins: withMesh ? [bridge, mesh] : [bridge] }, null, 2)}\n`;
}

/** A node's CNI directories: Debian's real plugins and the mesh stand-in, the primary's conflist with or without the mesh. */
export interface CniNodeDir {
  readonly root: string;
  readonly confDir: string;
  readonly binDir: string;
  /** The primary rewrites its file atomically (write aside, rename over), as installers do. */
  writePrimary(withMesh: boolean): Promise<void>;
  /** `--cni-audit --cni-conf-dir ... --cni-bin-dir ...` for the agent. */
  readonly auditArgs: readonly string[];
  remove(): Promise<void>;
}

export async function cniNodeDir(withMesh: boolean): Promise<CniNodeDir> {
  execFileSync('bash', [join(SCRIPTS, 'ensure-containerd.sh')], { stdio: 'ignore' });
  const root = await mkdtemp(join(tmpdir(), `interlock-node-gate-${process.pid}-`));
  const confDir = join(root, 'net.d');
  const binDir = join(root, 'bin');
  await mkdir(confDir);
  await mkdir(binDir);
  for (const plugin of ['bridge', 'host-local', 'loopback'])
    await copyFile(join(PLUGINS, plugin), join(binDir, plugin));
  await copyFile(STANDIN, join(binDir, MESH_PLUGIN));
  await chmod(join(binDir, MESH_PLUGIN), 0o755);
  const writePrimary = async (mesh: boolean): Promise<void> => {
    const staged = join(root, `staged-${PRIMARY}`);
    await writeFile(staged, primaryConflist(mesh));
    await rename(staged, join(confDir, PRIMARY));
  };
  await writePrimary(withMesh);
  return {
    root,
    confDir,
    binDir,
    writePrimary,
    auditArgs: ['--cni-audit', '--cni-conf-dir', confDir, '--cni-bin-dir', binDir],
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
