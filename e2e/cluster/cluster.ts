import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** Where scripts/cluster-env.sh keeps the running cluster (CLUSTER_STATE overrides it there too). */
export const STATE = process.env['CLUSTER_STATE'] ?? '/var/lib/interlock-cluster';
const KUBECONFIG = join(STATE, 'admin.kubeconfig');
/** The Kubernetes v1.33.13 kubectl built with the cluster: the same version as its API server. */
const KUBECTL = (): string => join(readFileSync(join(STATE, 'bin'), 'utf8').trim(), 'kubectl');
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const IMAGE = `docker.io/library/${process.env['INTERLOCK_IMAGE'] ?? 'mesh-interlock:dev'}`;

const STANDIN = fileURLToPath(new URL('../../test/fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const CORPUS = fileURLToPath(new URL('../../test/fixtures/corpus/', import.meta.url));
/** The ruleset linkerd-cni's own tool writes, which the mesh plugin stand-in writes into each pod. */
export const LINKERD_RULES = `${CORPUS}linkerd/cni-default/iptables-nft-save.v4.txt`;
export const LINKERD_VALIDATOR = 'linkerd-network-validator';
/** A process the image has that holds a container open (the real proxies are not here). */
export const STAND_IN = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];

/** A Deployment meshed as Linkerd's injector shapes it: a linkerd-proxy (stand-in process) beside the app. */
export function linkerdDeployment(name: string, namespace: string, annotations = ''): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}${annotations ? `, annotations: {${annotations}}` : ''}}
    spec:
      securityContext: {runAsUser: 65534, runAsGroup: 65534}
      containers:
      - {name: linkerd-proxy, image: ${IMAGE}, command: ${JSON.stringify(STAND_IN)}}
      - {name: app, image: ${IMAGE}, command: ${JSON.stringify(STAND_IN)}}
`;
}

/**
 * The namespace made anew (a cluster kept from an earlier run, INTERLOCK_CLUSTER_KEEP=1, may still
 * hold it), with the Event RBAC `interlock manifest --rbac` prints for it. Ready once its `default`
 * ServiceAccount exists: the ServiceAccount controller makes it a moment after the namespace, and
 * until then the API server refuses every pod that names none ("serviceaccount default not found").
 */
export async function freshNamespace(namespace: string): Promise<void> {
  await kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  await kubectl(['create', 'namespace', namespace]);
  await kubectl(['apply', '-f', '-'], await interlock(['manifest', '--rbac', '--namespace', namespace]));
  await defaultAccount(namespace);
}

/** Waits for the namespace's `default` ServiceAccount, without which the API server refuses a pod naming none. */
export async function defaultAccount(namespace: string): Promise<void> {
  await waitFor(
    `the default ServiceAccount of ${namespace}`,
    async () =>
      (await kubectl(['get', 'serviceaccount', 'default', '-n', namespace, '--ignore-not-found', '-o', 'name'])) !== '',
    60_000,
  );
}

/** Every object of every listable kind, cluster-scoped or in any namespace, with Interlock's labels (kubectl -o name). */
export async function interlockObjects(): Promise<string> {
  const kinds = (await kubectl(['api-resources', '--verbs=list', '-o', 'name'])).split('\n').filter(Boolean);
  return (
    await kubectl(['get', kinds.join(','), '-A', '-l', 'app.kubernetes.io/part-of=interlock', '-o', 'name'])
  ).trim();
}

export interface Ran {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], input?: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { env: { ...process.env, KUBECONFIG }, maxBuffer: 64 << 20, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === 'number' ? error.code : error ? 1 : 0;
        resolve({ exitCode: code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

export async function kubectl(args: readonly string[], input?: string): Promise<string> {
  const result = await run(KUBECTL(), args, input);
  if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

/** The shipped CLI, its exit code and output whatever they are (`check` exits 69 on a failed check). */
export function interlockRun(args: readonly string[], input?: string): Promise<Ran> {
  return run('node', [CLI, ...args], input);
}

/** The shipped CLI, as an operator runs it to print what they apply. */
export async function interlock(args: readonly string[], input?: string): Promise<string> {
  const result = await interlockRun(args, input);
  if (result.exitCode !== 0) throw new Error(`interlock ${args.join(' ')}: exit ${result.exitCode}: ${result.stderr}`);
  return result.stdout;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(500);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/**
 * The node's CNI chain: the real bridge plugin, and after it the mesh's plugin (`type`,
 * linkerd-cni unless named) when `meshRules` names that mesh's ruleset (the stand-in that writes a
 * ruleset the mesh's own tool wrote: linkerd-cni and kuma-cni cannot be built here,
 * docs/testing.md). containerd reloads the directory live.
 */
export function setChain(meshRules: string | undefined, type = 'linkerd-cni'): void {
  const plugin = join(STATE, 'cni-bin', type);
  copyFileSync(STANDIN, plugin);
  chmodSync(plugin, 0o755);
  chainMeshPlugin(meshRules ? { type, rulesFile: meshRules } : undefined);
}

/** The mesh plugins a test may chain; any of them left in the chain is replaced. */
const MESH_PLUGINS: ReadonlySet<unknown> = new Set(['linkerd-cni', 'istio-cni', 'kuma-cni']);

/**
 * The node's chain as a mesh's installer leaves it: bridge and portmap, then `mesh` (its entry, as
 * its installer appends it: istio-cni's from e2e/cluster/istio-cni.ts), or no mesh plugin at all.
 */
export function chainMeshPlugin(mesh: Readonly<Record<string, unknown>> | undefined): void {
  const file = join(STATE, 'net.d', '10-interlock-cluster.conflist');
  const conf = JSON.parse(readFileSync(file, 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const plugins = conf.plugins.filter((plugin) => !MESH_PLUGINS.has(plugin['type']));
  if (mesh) plugins.push({ ...mesh });
  // Whole or not at all: containerd watches the directory and may read it at any moment.
  writeFileSync(`${file}.tmp`, JSON.stringify({ ...conf, plugins }, null, 2));
  renameSync(`${file}.tmp`, file);
}

/**
 * A kubeconfig as a CNI plugin's installer writes it for the node (istio-cni's install-cni,
 * Multus's thin entrypoint): the API server's Service address, the cluster's CA and a token of
 * `account` in `namespace`. The plugin runs in the node's network namespace, where kube-proxy
 * serves the Service.
 */
export async function serviceAccountKubeconfig(namespace: string, account: string): Promise<string> {
  const service = JSON.parse(await kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'json'])) as {
    spec: { clusterIP: string; ports: Array<{ port: number }> };
  };
  const ca = JSON.parse(await kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', namespace, '-o', 'json'])) as {
    data: { 'ca.crt': string };
  };
  const token = (await kubectl(['create', 'token', account, '-n', namespace, '--duration=2h'])).trim();
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'local',
        cluster: {
          server: `https://${service.spec.clusterIP}:${service.spec.ports[0]?.port ?? 443}`,
          'certificate-authority-data': Buffer.from(ca.data['ca.crt']).toString('base64'),
        },
      },
    ],
    contexts: [{ name: `${account}-context`, context: { cluster: 'local', user: account } }],
    'current-context': `${account}-context`,
    users: [{ name: account, user: { token } }],
  });
}

export interface PodStatus {
  readonly metadata: { readonly name: string; readonly uid: string };
  readonly status: {
    readonly phase?: string;
    readonly initContainerStatuses?: ReadonlyArray<{
      readonly name: string;
      readonly restartCount: number;
      readonly state: {
        readonly waiting?: { readonly reason?: string };
        readonly running?: unknown;
        readonly terminated?: { readonly exitCode: number; readonly message?: string };
      };
      readonly lastState: { readonly terminated?: { readonly exitCode: number; readonly message?: string } };
    }>;
    readonly containerStatuses?: ReadonlyArray<{
      readonly name: string;
      readonly ready: boolean;
      readonly started?: boolean;
    }>;
  };
}

export async function podsOf(namespace: string, selector: string): Promise<PodStatus[]> {
  const list = JSON.parse(await kubectl(['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as {
    items: PodStatus[];
  };
  return list.items;
}

/** An init container's status, as the kubelet reports it in `initContainerStatuses`. */
export type InitStatus = NonNullable<PodStatus['status']['initContainerStatuses']>[number];

/**
 * Waits for the pod `find` gives to show its `validator` init container backed off: failed,
 * restarted and waiting in CrashLoopBackOff, as the kubelet shows a pod the validator blocks.
 * Returns that pod and its validator's status.
 */
export async function validatorBackedOff(
  validator: string,
  find: () => Promise<PodStatus | undefined>,
  ms = 180_000,
): Promise<{ pod: PodStatus; status: InitStatus }> {
  return waitFor(
    `${validator} to back off after failing twice`,
    async () => {
      const pod = await find();
      const status = pod?.status.initContainerStatuses?.find((c) => c.name === validator);
      return pod && status && status.restartCount >= 1 && status.state.waiting?.reason === 'CrashLoopBackOff'
        ? { pod, status }
        : undefined;
    },
    ms,
  );
}
