import { spawn } from 'node:child_process';
import { chmod, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContainerdNode, run, type Run } from './containerd-node.js';

const IMAGE = process.env['INTERLOCK_IMAGE'] ?? 'mesh-interlock:dev';
/** How `ctr images import` names an image saved by docker. */
const CTR_IMAGE = IMAGE.includes('/') ? IMAGE : `docker.io/library/${IMAGE}`;
const RULES_FILE = fileURLToPath(
  new URL('../../test/fixtures/corpus/linkerd/cni-default/iptables-nft-save.v4.txt', import.meta.url),
);
const FIXTURES = fileURLToPath(new URL('../../test/fixtures/cni/', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
/** Debian's containernetworking-plugins. */
const PLUGINS = '/usr/lib/cni';

/**
 * A node ready for the scenarios: containerd with the project image, the real bridge,
 * host-local, loopback and portmap plugins, linkerd-cni played by the mesh stand-in, and
 * old-mesh, the stand-in that speaks only CNI 0.3.x.
 */
export async function startCniNode(): Promise<ContainerdNode> {
  const node = await ContainerdNode.start();
  try {
    for (const plugin of ['bridge', 'host-local', 'loopback', 'portmap'])
      await copyFile(join(PLUGINS, plugin), join(node.binDir, plugin));
    await copyFile(join(FIXTURES, 'mesh-cni-standin.mjs'), join(node.binDir, 'linkerd-cni'));
    await copyFile(join(FIXTURES, 'old-cni-standin.mjs'), join(node.binDir, 'old-mesh'));
    for (const plugin of ['linkerd-cni', 'old-mesh']) await chmod(join(node.binDir, plugin), 0o755);
    const save = spawn('docker', ['save', IMAGE], { stdio: ['ignore', 'pipe', 'inherit'] });
    const imported = await node.ctr(['images', 'import', '-'], { input: save.stdout, timeoutMs: 180_000 });
    if (imported.exitCode !== 0) throw new Error(`ctr images import: ${imported.stderr}`);
    return node;
  } catch (error) {
    await node.stop();
    throw error;
  }
}

let sequence = 0;
const nextId = (prefix: string): string => `${prefix}-${process.pid}-${++sequence}`;

/** A pod whose only process prints its interfaces: what containerd's CNI setup gave it. */
export async function observePod(node: ContainerdNode): Promise<{ run: Run; eth0?: string }> {
  const script =
    'const e=require("os").networkInterfaces().eth0||[];const a=e.find(x=>x.family==="IPv4");console.log("ETH0="+(a?a.cidr:""))';
  const result = await node.ctr(['run', '--rm', '--cni', CTR_IMAGE, nextId('observe'), 'node', '-e', script], {
    timeoutMs: 60_000,
  });
  const match = /ETH0=(\S*)/.exec(result.stdout);
  return { run: result, ...(match?.[1] ? { eth0: match[1] } : {}) };
}

/**
 * `interlock validate` in a pod containerd creates, as an init container runs: the image's user
 * (65534), every capability dropped, the pod's own network namespace.
 */
export function validatePod(node: ContainerdNode, mesh = 'linkerd'): Promise<Run> {
  const args = [
    'interlock',
    'validate',
    '--mesh',
    mesh,
    '--timeout',
    '5s',
    '--log-format',
    'plain',
    '--termination-log',
    '/tmp/termination-log',
  ];
  return node.ctr(['run', '--rm', '--cni', ...NO_CAPABILITIES, CTR_IMAGE, nextId('validate'), ...args], {
    timeoutMs: 60_000,
  });
}

/** ctr has no "drop ALL": every capability of containerd's default set, dropped by name. */
const DEFAULT_CAPABILITIES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FSETID',
  'FOWNER',
  'MKNOD',
  'NET_RAW',
  'SETGID',
  'SETUID',
  'SETFCAP',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'KILL',
  'AUDIT_WRITE',
];
const NO_CAPABILITIES = DEFAULT_CAPABILITIES.flatMap((name) => ['--cap-drop', `CAP_${name}`]);

export interface CniCheckRun {
  readonly exitCode: number;
  readonly verdict: {
    readonly healthy: boolean;
    readonly loads?: { readonly file: string; readonly networkName: string; readonly chain: readonly string[] };
    readonly findings: ReadonlyArray<{
      readonly code: string;
      readonly severity: string;
      readonly file?: string;
      readonly message: string;
    }>;
  };
}

/** The shipped CLI, on the node's directories. */
export async function cniCheck(node: ContainerdNode, mesh = 'linkerd'): Promise<CniCheckRun> {
  const result = await run(
    'node',
    [
      CLI,
      'cni-check',
      '--mesh',
      mesh,
      '--cni-conf-dir',
      node.confDir,
      '--cni-bin-dir',
      node.binDir,
      // No CRI here (`ctr run --cni`): the prediction alone, compared with what containerd did.
      '--cri-endpoint',
      'none',
      '--format',
      'json',
    ],
    { timeoutMs: 30_000 },
  );
  try {
    return { exitCode: result.exitCode, verdict: JSON.parse(result.stdout) as CniCheckRun['verdict'] };
  } catch {
    throw new Error(`cni-check exit ${result.exitCode}: ${result.stdout}${result.stderr}`);
  }
}

/** What cni-check predicts containerd does: load a file, or fail (on a file, when it names one). */
export type Prediction =
  { readonly kind: 'loads'; readonly file: string } | { readonly kind: 'fails'; readonly file?: string };

const LOAD_FAILURES = new Set(['NoConfig', 'LoadFails', 'PartialFile']);

export function predictionOf(check: CniCheckRun): Prediction {
  const failure = check.verdict.findings.find(
    (finding) => finding.severity === 'error' && LOAD_FAILURES.has(finding.code) && !check.verdict.loads,
  );
  if (failure) return { kind: 'fails', ...(failure.file ? { file: failure.file } : {}) };
  if (!check.verdict.loads) throw new Error(`no prediction in ${JSON.stringify(check.verdict)}`);
  return { kind: 'loads', file: check.verdict.loads.file };
}

/** The bridge plugin's configuration: its own bridge and subnet, so the pod's address says which file it came from. */
export function bridgePlugin(index: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'bridge',
    bridge: `ilk-br${index}`,
    isGateway: true,
    ipMasq: false,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: subnetOf(index) }]],
      routes: [{ dst: '0.0.0.0/0' }],
      dataDir: '/var/lib/cni/ipam',
    },
    ...extra,
  };
}

const subnetOf = (index: number): string => `10.${100 + Math.floor(index / 200)}.${index % 200}.0/24`;

export function meshPlugin(): Record<string, unknown> {
  return { type: 'linkerd-cni', rulesFile: RULES_FILE };
}

/** The bridges containerd's CNI setup made in the node (the bridge plugin's DEL keeps them). */
export async function nodeBridges(node: ContainerdNode): Promise<string[]> {
  const links = await node.inNode('ip', ['-o', 'link', 'show', 'type', 'bridge']);
  return [...links.stdout.matchAll(/^\d+: (ilk-br\d+)[:@]/gm)].map((match) => match[1] as string);
}

export async function removeBridges(node: ContainerdNode): Promise<void> {
  for (const bridge of await nodeBridges(node)) await node.inNode('ip', ['link', 'del', bridge]);
}
