import { isDeepStrictEqual } from 'node:util';
import { containerEnv, validatorConfigOf, type ValidatorInvocation } from '../compat/validator-config.js';
import type { ValidateConfig } from '../config/validate-config.js';
import type { PodView, ValidatorOrigin } from './pod-view.js';

/**
 * What `manifest`, `inject` and the webhook print for the agent's mesh's validator: built by the
 * CLI from the printers themselves (src/cli/commands/node/shipped-validator.ts), never typed here.
 */
export interface ShippedValidator {
  /** validate's configuration of each printed variant (with and without the rules check, the Event). */
  readonly configs: readonly ValidateConfig[];
  /** The commands printed: undefined (the image's entrypoint), or the webhook's drop-in path. */
  readonly commands: readonly (readonly string[] | undefined)[];
  /** Every env entry a printer writes on the validator, whole: the only ones a trusted run may have. */
  readonly env: readonly unknown[];
  /** The mount paths a printer writes (the pod's annotations and labels as downward-API files). */
  readonly mountPaths: readonly string[];
}

/** Why a run is not Interlock's own verdict, or undefined when it is. */
export type Distrust = string | undefined;

/**
 * Whether a validator run can be believed to be Interlock's own verdict about the node's CNI.
 * Everything in a pod's spec, metadata and termination message is written by whoever creates the
 * pod; the image that ran is reported by the kubelet. So a run is trusted only when the kubelet
 * reports an image of a repository the operator named (`--trusted-image`), AND the pod's author
 * left it running as the printers ship it: their command, an argv and environment whose
 * configuration is the printed one (a tenant's `--outbound-port 9999` fails genuinely, and says
 * nothing about the node), no other environment (NODE_OPTIONS and the like), no envFrom, no
 * lifecycle hooks, no volume or device over its files, no process namespace shared with another
 * container, not the node's network. docs/node-agent.md states the boundary.
 */
export function isTrustedValidator(
  view: PodView,
  trustedImages: readonly string[],
  shipped: ShippedValidator,
): boolean {
  return distrustOf(view, trustedImages, shipped) === undefined;
}

export function distrustOf(view: PodView, trustedImages: readonly string[], shipped: ShippedValidator): Distrust {
  const origin = view.validatorOrigin;
  if (!ranTrustedImage(origin, trustedImages)) return 'the kubelet reports no trusted image';
  return tampering(origin, shipped) ?? argvDistrust(origin, shipped);
}

/** The service account token the API server's admission mounts; every other mount is a printer's. */
const SERVICE_ACCOUNT_MOUNT = /^\/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/?$/;

function tampering(origin: ValidatorOrigin, shipped: ShippedValidator): Distrust {
  if (!shipped.commands.some((command) => isDeepStrictEqual(command, origin.command)))
    return 'its command is not the one printed';
  if (!origin.env.every((entry) => shipped.env.some((printed) => isDeepStrictEqual(entry, printed))))
    return 'an environment variable the printers do not set';
  if (origin.envFrom) return 'envFrom';
  if (origin.lifecycle) return 'a lifecycle hook';
  const mounts = shipped.mountPaths.map((path) => path.replace(/\/$/, ''));
  if (!origin.mountPaths.every((path) => SERVICE_ACCOUNT_MOUNT.test(path) || mounts.includes(path.replace(/\/$/, ''))))
    return 'a volume mounted where the printers mount none';
  if (origin.devices) return 'volumeDevices';
  if (origin.sharedProcesses) return 'a process namespace shared with other containers';
  if (origin.hostNetwork) return "the node's network";
  return undefined;
}

function argvDistrust(origin: ValidatorOrigin, shipped: ShippedValidator): Distrust {
  const run = validatorConfigOf(origin.command, origin.args, containerEnv(origin.env), origin.identity);
  if (!run.ok) return `its argv is refused: ${run.error.message}`;
  return shipped.configs.some((config) => sameCheck(run.value, config))
    ? undefined
    : 'its argv or environment asks for another check than the printed one';
}

/**
 * The run checks what the printed validator checks: the same interception, families, rules mode,
 * probe destination and failure code, and no shorter deadline. A drop-in's probe port, hint and
 * spread are the mesh's own rendering (Linkerd's `--connect-addr`; Istio's argv names every
 * exclusion, so its probe spreads), kept as the mesh wrote them.
 */
function sameCheck(run: ValidatorInvocation, shipped: ValidateConfig): boolean {
  const config = run.config;
  return (
    isDeepStrictEqual(asSets(config.interception), asSets(shipped.interception)) &&
    config.family === shipped.family &&
    config.rules === shipped.rules &&
    config.timeoutMs >= shipped.timeoutMs &&
    config.failureExitCode === shipped.failureExitCode &&
    isDeepStrictEqual(config.probeAddresses, shipped.probeAddresses) &&
    (run.dropIn !== undefined ||
      (config.probePort === shipped.probePort &&
        config.probeSpread === shipped.probeSpread &&
        isDeepStrictEqual(config.probeAddressHints, shipped.probeAddressHints)))
  );
}

/**
 * The spec with every list sorted: its lists are sets (ports, ranges, uids, CIDRs, interfaces),
 * and Istio's `-d 15090,15021,15020` names the same set as the preset's sorted one.
 */
function asSets(value: unknown): unknown {
  if (Array.isArray(value))
    return value.map(asSets).sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asSets(item)]));
}

const sortKey = (value: unknown): string =>
  JSON.stringify(value, (_, item: unknown) => (typeof item === 'bigint' ? `${item}n` : item)) ?? '';

function ranTrustedImage(origin: ValidatorOrigin, trustedImages: readonly string[]): boolean {
  const digest =
    /@(sha256:[0-9a-f]{64})$/.exec(origin.imageId)?.[1] ??
    /^(?:[a-z-]+:\/\/)?(sha256:[0-9a-f]{64})$/.exec(origin.imageId)?.[1];
  const repository = origin.image ? repositoryOf(origin.image) : undefined;
  return trustedImages.some((trusted) =>
    trusted.startsWith('sha256:')
      ? trusted === digest
      : repository !== undefined && repositoryOf(trusted) === repository,
  );
}

/**
 * An image reference's repository, normalised as the container runtimes do: the tag and digest
 * dropped, `docker.io/` added when no registry is named, `library/` for a one-part name.
 */
export function repositoryOf(reference: string): string {
  const withoutDigest = reference.replace(/^[a-z-]+:\/\//, '').split('@', 1)[0]!;
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  const name = colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
  const parts = name.split('/');
  const registry = parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!) ? parts.shift()! : 'docker.io';
  const path = parts.length === 1 && registry === 'docker.io' ? `library/${parts[0]}` : parts.join('/');
  return `${registry}/${path}`.toLowerCase();
}
