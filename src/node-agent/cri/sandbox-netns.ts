import { fail, ok, type Result } from '../../reason/result.js';

/** The verbose info the re-check reads; a runtime may send more, never less. */
const MAX_INFO_BYTES = 1024 * 1024;

export type NetnsFailure = 'NetnsUnknown' | 'NetnsClosed';

/**
 * The sandbox's network namespace path from PodSandboxStatus's verbose info: the `info` key's
 * JSON, `runtimeSpec.linux.namespaces[type=network].path`. containerd (pkg/cri/server
 * sandbox_status.go, SandboxInfo) and CRI-O (server/sandbox_status.go) both write it there;
 * containerd also says `netNamespaceClosed` once the namespace is gone. The runtime writes this,
 * not the pod's author; the path is still checked to be a plain absolute path before it is used.
 */
export function sandboxNetnsPath(info: ReadonlyMap<string, string>): Result<string, NetnsFailure> {
  const raw = info.get('info');
  if (raw === undefined) return fail('NetnsUnknown', 'the runtime gave no verbose `info` for the sandbox');
  if (raw.length > MAX_INFO_BYTES) return fail('NetnsUnknown', `the sandbox info is over ${MAX_INFO_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return fail('NetnsUnknown', 'the sandbox info is not JSON');
  }
  const root = record(parsed);
  if (root.netNamespaceClosed === true)
    return fail('NetnsClosed', "the runtime says the sandbox's network namespace is closed");
  const namespaces = record(record(record(root.runtimeSpec).linux)).namespaces;
  const network = (Array.isArray(namespaces) ? namespaces : []).map(record).filter((entry) => entry.type === 'network');
  if (network.length !== 1) return fail('NetnsUnknown', `the sandbox spec names ${network.length} network namespaces`);
  const path = network[0]!.path;
  if (typeof path !== 'string' || path === '')
    return fail('NetnsUnknown', 'the sandbox shares the host network namespace (no path): not a pod namespace');
  if (!/^\/[A-Za-z0-9._\-/]{1,4095}$/.test(path) || path.split('/').some((part) => part === '..' || part === '.'))
    return fail(
      'NetnsUnknown',
      `the sandbox's network namespace path ${JSON.stringify(path.slice(0, 200))} is not a plain absolute path`,
    );
  return ok(path);
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
