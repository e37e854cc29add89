import { posix } from 'node:path';
import { scalarText, type Plain } from './plain.js';

/**
 * Fields that make an init container something other than a validator that runs once and blocks
 * the pod: `restartPolicy` (Always turns it into a sidecar the pod never waits for), `lifecycle`
 * hooks and probes (commands of the author's beside the validator, or a kill by a probe).
 */
const NOT_A_PLAIN_INIT = ['restartPolicy', 'lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;

/**
 * Variables that change what the validator's runtime loads or runs before Interlock's first line:
 * Node.js's own (NODE_OPTIONS=--require …), libuv's, the dynamic loader's (LD_PRELOAD), glibc's
 * tunables, OpenSSL's configuration and trust store, and PATH (the children it spawns: iptables-save,
 * nft, setpriv).
 */
const RUNTIME_ENV = /^(?:NODE_|LD_|UV_|OPENSSL_|GLIBC_TUNABLES$|SSL_CERT_(?:FILE|DIR)$|PATH$)/;

/**
 * Paths no volume may cover in the validator: Interlock's own files and the system's (binaries,
 * libraries, configuration, the kernel's interfaces). Interlock's podinfo mount under /etc is
 * told apart by the caller.
 */
const PROTECTED_PATHS = [
  '/opt/interlock',
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/proc',
  '/sys',
  '/dev',
  '/run/xtables.lock',
] as const;

/**
 * Why the validator container carries a field the pod's author controls that would change what
 * it runs or whether it blocks the pod, or undefined. The same rule for `interlock inject` and both
 * of the webhook's paths (`/mutate`, `/ambient`); `isOwnMount` says which mount is Interlock's.
 */
export function validatorFieldProblem(validator: Plain, isOwnMount: (mount: Plain) => boolean): string | undefined {
  const name = scalarText(validator.name);
  const field = NOT_A_PLAIN_INIT.find((key) => validator[key] !== undefined);
  if (field)
    return `container ${name} sets ${field}; the validator is a plain init container that runs once and blocks the pod until it passes: remove it`;
  const env = listOf(validator.env).find((entry) => RUNTIME_ENV.test(scalarText(entry.name)));
  if (env)
    return `container ${name} sets ${scalarText(env.name)}, which changes what the validator's runtime loads or runs: remove it`;
  const mount = listOf(validator.volumeMounts).find((item) => !isOwnMount(item) && coversProtected(item));
  if (mount)
    return `container ${name} mounts ${scalarText(mount.name)} at ${scalarText(mount.mountPath)}, over Interlock's or the system's files: remove it`;
  return undefined;
}

/** At or under a protected path, or above one (a mount at /opt hides /opt/interlock). */
function coversProtected(mount: Plain): boolean {
  const path = posix.normalize(`/${scalarText(mount.mountPath)}/`);
  return PROTECTED_PATHS.some((root) => path.startsWith(`${root}/`) || `${root}/`.startsWith(path));
}

const listOf = (value: unknown): Plain[] =>
  Array.isArray(value) ? value.filter((item): item is Plain => typeof item === 'object' && item !== null) : [];

/** Where the API server's ServiceAccount admission mounts the pod's token into every container. */
const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * For a validator that is Interlock's own (Istio ambient's, added by the webhook): any variable
 * beyond `ownEnv`'s names, or any mount but Interlock's and the service-account token's, is the
 * author's, and refused.
 */
export function foreignSettingProblem(
  validator: Plain,
  ownEnv: readonly Plain[],
  isOwnMount: (mount: Plain) => boolean,
): string | undefined {
  const name = scalarText(validator.name);
  const names = new Set(ownEnv.map((entry) => scalarText(entry.name)));
  const env = listOf(validator.env).find((entry) => !names.has(scalarText(entry.name)));
  if (env)
    return `container ${name} sets ${scalarText(env.name)}; Interlock's validator has exactly Interlock's environment: remove it`;
  const mount = listOf(validator.volumeMounts).find(
    (item) => !isOwnMount(item) && posix.normalize(scalarText(item.mountPath)) !== SERVICE_ACCOUNT_MOUNT,
  );
  if (mount)
    return `container ${name} mounts ${scalarText(mount.name)} at ${scalarText(mount.mountPath)}; Interlock's validator has exactly Interlock's mounts: remove it`;
  return undefined;
}
