import { posix } from 'node:path';
import type { RuntimeName } from './runtime-load.js';

/** Each runtime's default CRI socket (crictl's and the kubelet's defaults). */
export const RUNTIME_SOCKETS: Readonly<Record<RuntimeName, string>> = {
  containerd: '/run/containerd/containerd.sock',
  crio: '/var/run/crio/crio.sock',
};

/** The sockets to try when none is named: the given runtime's, or containerd's then CRI-O's, under the host root. */
export function defaultSockets(runtime: RuntimeName | undefined, hostRoot: string): string[] {
  const runtimes: RuntimeName[] = runtime ? [runtime] : ['containerd', 'crio'];
  return runtimes.map((name) => posix.join(hostRoot, RUNTIME_SOCKETS[name]));
}
