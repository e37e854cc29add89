import type { PodView, ValidatorOrigin } from './pod-view.js';

/**
 * Whether a validator run can be believed to be Interlock's own verdict. Everything in a pod's
 * spec, metadata and termination message is written by whoever creates the pod; the image that
 * ran is reported by the kubelet. So a run is trusted only when the kubelet reports an image of a
 * repository the operator named (`--trusted-image`), AND the pod's author left that image running
 * Interlock as it ships: the image's entrypoint (or the Linkerd drop-in path, which execs it), no
 * environment that could load other code into it (NODE_OPTIONS and the like), no envFrom, no
 * lifecycle hooks, no volume mounted over its files, and no process namespace shared with another
 * container. docs/node-agent.md states the boundary.
 */
export function isTrustedValidator(view: PodView, trustedImages: readonly string[]): boolean {
  const origin = view.validatorOrigin;
  return ranTrustedImage(origin, trustedImages) && runsAsShipped(origin);
}

/** Linkerd injects its validator with this command; Interlock's image puts its drop-in there. */
const DROP_IN_COMMANDS: readonly string[] = ['/usr/lib/linkerd/linkerd2-network-validator'];

/** What Interlock reads from its environment, and what admission adds: nothing else may be set. */
const ALLOWED_ENV = /^(INTERLOCK_[A-Z0-9_]+|POD_NAME|POD_NAMESPACE|POD_UID|NODE_NAME|KUBERNETES_SERVICE_(HOST|PORT))$/;

/**
 * The service account token the API server's admission mounts, and the downward API files of the
 * pod's annotations and labels that `manifest`/`inject` mount (data Interlock parses, never code);
 * nothing else is mounted into the validator.
 */
const ALLOWED_MOUNT = /^(\/var\/run\/secrets\/kubernetes\.io\/serviceaccount|\/etc\/interlock\/podinfo)\/?$/;

function runsAsShipped(origin: ValidatorOrigin): boolean {
  const command = origin.command;
  const entrypoint = command === undefined || (command.length === 1 && DROP_IN_COMMANDS.includes(command[0]!));
  return (
    entrypoint &&
    origin.envNames.every((name) => ALLOWED_ENV.test(name)) &&
    !origin.envFrom &&
    !origin.lifecycle &&
    origin.mountPaths.every((path) => ALLOWED_MOUNT.test(path)) &&
    !origin.sharedProcesses
  );
}

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
