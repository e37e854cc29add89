import { join } from 'node:path';
import {
  IMAGE,
  interlock,
  interlockRun,
  kubectl,
  linkerdDeployment,
  LINKERD_RULES,
  STATE,
  type PodStatus,
} from './cluster.js';

// What the Multus tests (multus.test.ts thin, multus-thick.test.ts) share: the node's CNI files,
// its CRI socket, the mesh plugin's stand-in, the meshed workload, cni-check run as on the node,
// and Multus's own report on a pod.
export const NET_D = join(STATE, 'net.d');
export const CONFLIST = join(NET_D, '10-interlock-cluster.conflist');
const CRI = `unix://${join(STATE, 'containerd.sock')}`;
/** linkerd-cni's stand-in, writing linkerd-cni's recorded rules (as validator.test.ts). */
export const LINKERD_PLUGIN = { type: 'linkerd-cni', rulesFile: LINKERD_RULES };
/** Multus's pod annotation (pkg/k8sclient, v4.2.2): the networks it attached, as it reports them. */
const NETWORK_STATUS = 'k8s.v1.cni.cncf.io/network-status';

export interface CniVerdict {
  readonly healthy: boolean;
  readonly loads?: { readonly file: string; readonly chain: readonly string[] };
  readonly delegate?: { readonly file: string; readonly chain: readonly string[] };
  readonly observed?: { readonly agrees: boolean };
  readonly findings: ReadonlyArray<{ readonly code: string; readonly file?: string; readonly message: string }>;
}

/** cni-check as on the node: the runtime's conf dir, and containerd asked over its CRI socket. */
export async function cniCheck(): Promise<{ exitCode: number; verdict: CniVerdict }> {
  const argv = ['cni-check', '--mesh', 'linkerd', '--cni-conf-dir', NET_D, '--cri-endpoint', CRI];
  const result = await interlockRun([...argv, '--version-timeout', '20s', '--format', 'json']);
  try {
    return { exitCode: result.exitCode, verdict: JSON.parse(result.stdout) as CniVerdict };
  } catch {
    throw new Error(`cni-check exit ${result.exitCode}: ${result.stdout}${result.stderr}`);
  }
}

/** The Deployment `interlock inject` made of a Linkerd-meshed workload, applied in `namespace`. */
export async function deployMeshed(name: string, namespace: string): Promise<void> {
  const injected = await interlock(
    ['inject', '--mesh', 'linkerd', '--image', IMAGE],
    linkerdDeployment(name, namespace, 'linkerd.io/inject: enabled'),
  );
  await kubectl(['apply', '-f', '-'], injected);
}

export interface AttachedNetwork {
  readonly name: string;
  readonly interface?: string;
  readonly default?: boolean;
}

/** The networks Multus reported on the pod: it ran, and which network it gave the pod. `log` explains its absence. */
export async function networkStatus(
  pod: PodStatus,
  namespace: string,
  log: () => string | Promise<string> = () => '',
): Promise<AttachedNetwork[]> {
  const annotations = JSON.parse(
    await kubectl(['get', 'pod', '-n', namespace, pod.metadata.name, '-o', 'jsonpath={.metadata.annotations}']),
  ) as Record<string, string>;
  const status = annotations[NETWORK_STATUS];
  if (!status) throw new Error(`${pod.metadata.name}: no ${NETWORK_STATUS} (Multus did not run):\n${await log()}`);
  return JSON.parse(status) as AttachedNetwork[];
}
