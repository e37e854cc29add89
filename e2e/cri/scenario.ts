import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../cni/containerd-node.js';
import type { CriNode } from './cri-node.js';
import type { ContainerSpec, PodObject, VolumeSpec } from './kubelet/pod-spec.js';

const CORPUS = fileURLToPath(new URL('../../test/fixtures/corpus/', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** The rules each mesh's CNI plugin writes into a pod (the corpus's captured iptables-nft-save). */
export const MESH_RULES = {
  linkerd: `${CORPUS}linkerd/cni-default/iptables-nft-save.v4.txt`,
  istio: `${CORPUS}istio-cni/basic/iptables-nft-save.v4.txt`,
} as const;
export type Mesh = keyof typeof MESH_RULES;
export const MESH_PLUGIN: Record<Mesh, string> = { linkerd: 'linkerd-cni', istio: 'istio-cni' };

/** Each network gets its own bridge and /24 in 10.213.0.0/16: the address says which file containerd used. */
const subnetOf = (index: number): string => `10.213.${index}.0/24`;
export const inSubnet = (ip: string | undefined, index: number): boolean =>
  ip !== undefined && ip.startsWith(subnetOf(index).replace('.0/24', '.'));

export function bridge(node: CriNode, index: number): Record<string, unknown> {
  return {
    type: 'bridge',
    bridge: `ilkcri${index}`,
    isGateway: true,
    ipMasq: false,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: subnetOf(index) }]],
      routes: [{ dst: '0.0.0.0/0' }],
      dataDir: `${node.root}/cni-data`,
    },
  };
}

export const meshPlugin = (mesh: Mesh): Record<string, unknown> => ({
  type: MESH_PLUGIN[mesh],
  rulesFile: MESH_RULES[mesh],
});

export const portmap = { type: 'portmap', capabilities: { portMappings: true } };

export const conflist = (plugins: readonly unknown[], cniVersion = '1.0.0', name = 'k8s-pod-network'): string =>
  JSON.stringify({ cniVersion, name, plugins }, null, 2);

let sequence = 0;
/** A pod with unique name and uid, owned by a ReplicaSet unless told otherwise. */
export function podOf(
  name: string,
  spec: { initContainers?: ContainerSpec[]; containers?: ContainerSpec[]; restartPolicy?: 'Always' | 'Never' },
  owner?: { name: string; uid: string },
): PodObject {
  sequence += 1;
  const uid = `0000${process.pid}`.slice(-5) + `-cri-${String(sequence).padStart(4, '0')}-${Date.now().toString(36)}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-${sequence}`,
      namespace: 'default',
      uid,
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', controller: true, ...owner }] }
        : {}),
    },
    spec: {
      nodeName: 'node-a',
      restartPolicy: spec.restartPolicy ?? 'Always',
      initContainers: spec.initContainers ?? [],
      containers: spec.containers ?? [APP],
      volumes: volumesFor([...(spec.initContainers ?? []), ...(spec.containers ?? [])]),
    },
  };
}

/** The app: the same image, holding the pod open (the validator's image has node; no other image exists here). */
export const APP: ContainerSpec = {
  name: 'app',
  image: 'app',
  command: ['node', '-e', 'setInterval(() => {}, 1 << 30)'],
  securityContext: {
    runAsUser: 65534,
    runAsGroup: 65534,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
  },
};

/** Interlock's own init container for a mesh, exactly as `interlock manifest` prints it. */
export async function manifestContainer(mesh: string, extra: readonly string[] = []): Promise<ContainerSpec> {
  const printed = await run('node', [CLI, 'manifest', '--mesh', mesh, ...extra]);
  if (printed.exitCode !== 0) throw new Error(`interlock manifest: ${printed.stderr}`);
  // The snippet's comment names the volume the operator adds to spec.volumes; the pods here add it too.
  for (const match of printed.stdout.matchAll(/^#\s+(\{"name":.*\})$/gm)) {
    const volume = JSON.parse(match[1] ?? '{}') as VolumeSpec;
    printedVolumes.set(volume.name, volume);
  }
  return parse(printed.stdout) as ContainerSpec;
}

/** Volumes `interlock manifest` printed beside its container, by name. */
const printedVolumes = new Map<string, VolumeSpec>();

/** The printed volumes these containers mount, as the operator adds them to the pod. */
export function volumesFor(containers: readonly ContainerSpec[]): VolumeSpec[] {
  const names = new Set(containers.flatMap((container) => (container.volumeMounts ?? []).map((mount) => mount.name)));
  return [...names].flatMap((name) => {
    const volume = printedVolumes.get(name);
    return volume ? [volume] : [];
  });
}

export interface CniCheck {
  readonly exitCode: number;
  readonly verdict: {
    readonly healthy: boolean;
    readonly loads?: { readonly file: string; readonly chain: readonly string[] };
    readonly findings: ReadonlyArray<{
      readonly code: string;
      readonly severity: string;
      readonly file?: string;
      readonly message: string;
    }>;
  };
}

/** The shipped `interlock cni-check` on the node's own conf and bin dirs, as the CRI plugin is configured. */
export async function cniCheck(node: CriNode, mesh: Mesh = 'linkerd'): Promise<CniCheck> {
  const args = [
    'cni-check',
    '--mesh',
    mesh,
    '--cni-conf-dir',
    node.confDir,
    '--cni-bin-dir',
    node.binDir,
    // The prediction alone: these scenarios set it beside what the runtime does to a pod.
    '--cri-endpoint',
    'none',
    // A generous VERSION deadline: the stand-ins are node scripts, slow to start on a loaded machine.
    '--version-timeout',
    '20s',
    '--format',
    'json',
  ];
  const result = await run('node', [CLI, ...args], { timeoutMs: 90_000 });
  try {
    return { exitCode: result.exitCode, verdict: JSON.parse(result.stdout) as CniCheck['verdict'] };
  } catch {
    throw new Error(`cni-check exit ${result.exitCode}: ${result.stdout}${result.stderr}`);
  }
}

const MESH_FIXTURES = fileURLToPath(new URL('../../test/fixtures/meshes/', import.meta.url));

/** An init container that runs to completion (Kuma's golden's `sleep 5`): it exits 0 at once. */
const COMPLETES = ['node', '-e', ''];

/**
 * Keeps a container's place and identity but gives it a process the image has (the real proxies
 * are not here): a long-running one, or one that exits 0 for an init container that runs to
 * completion (not a native sidecar), so the pod goes on as it would.
 */
const standIn = (container: ContainerSpec, init = false): ContainerSpec => ({
  name: container.name,
  image: container.image,
  command: init && container.restartPolicy !== 'Always' ? COMPLETES : (APP.command as string[]),
  ...(container.securityContext ? { securityContext: container.securityContext } : {}),
  ...(container.restartPolicy ? { restartPolicy: container.restartPolicy } : {}),
});

/**
 * The pod a mesh's injector renders (a Deployment's pod template from the mesh's own golden
 * file), with its validator init container exactly as injected (command, args, env,
 * securityContext) and only its image swapped for Interlock's: the drop-in path. Every other
 * container keeps its place, restartPolicy and securityContext, with a stand-in process.
 */
export async function injectedPod(
  fixture: string,
  validatorName: string,
): Promise<{ pod: PodObject; validator: ContainerSpec }> {
  const documents = parseAllDocuments(await readFile(`${MESH_FIXTURES}${fixture}`, 'utf8')).map(
    (doc) => doc.toJSON() as Record<string, unknown>,
  );
  // A workload's pod template, or a Pod itself (Kuma's injector goldens are Pods).
  const template = documents
    .map((doc) =>
      doc?.['kind'] === 'Pod'
        ? (doc['spec'] as PodObject['spec'])
        : (doc?.['spec'] as { template?: { spec?: PodObject['spec'] } } | undefined)?.template?.spec,
    )
    .find((spec) => spec?.initContainers?.some((container) => container.name === validatorName));
  if (!template) throw new Error(`${fixture} has no pod template with ${validatorName}`);
  const validator = template.initContainers?.find((container) => container.name === validatorName) as ContainerSpec;
  const base = podOf(fixture.split('/')[0] as string, {
    initContainers: (template.initContainers ?? []).map((c) => (c.name === validatorName ? c : standIn(c, true))),
    containers: template.containers.map((c) => standIn(c)),
  });
  // The volumes the validator mounts, as the injector declared them (Kuma's /tmp emptyDir).
  const mounted = new Set((validator.volumeMounts ?? []).map((mount) => mount.name));
  const volumes = (template.volumes ?? []).filter((volume) => mounted.has(volume.name));
  return {
    pod: {
      ...base,
      spec: {
        ...base.spec,
        volumes: [...(base.spec.volumes ?? []), ...volumes],
        ...(template.securityContext ? { securityContext: template.securityContext } : {}),
      },
    },
    validator,
  };
}
