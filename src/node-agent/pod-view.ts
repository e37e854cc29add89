import { containerIdentity } from '../compat/validator-config.js';
import type { BlockedBy } from './breaker.js';
import { arr, obj, podIdentityOf, str, type Json, type PodIdentity } from './pod-identity.js';

/**
 * What the agent keeps of a pod: identity, owner, and the validator container's last
 * termination. Pods are reduced to this on arrival, so the cache of 110 pods stays small.
 */
export interface ValidatorTermination {
  readonly exitCode: number;
  readonly message: string;
  /** Identifies this one run of the container, so the same failure is never handled twice. */
  readonly runId: string;
  /** When the kubelet says the run finished (ms since the epoch), or undefined when it does not say. */
  readonly finishedAtMs: number | undefined;
}

export interface PodView extends PodIdentity {
  readonly restartPolicy: string;
  /** lastState.terminated, else state.terminated: the validator's most recent finished run. */
  readonly validator: ValidatorTermination | undefined;
  /** What says whether the validator really is Interlock (see validator-trust.ts). */
  readonly validatorOrigin: ValidatorOrigin;
}

/**
 * The facts trust is decided from: the image the kubelet reports it ran (status, not spec: a
 * pod's author writes the spec) and whether the pod's author changed what runs in that image.
 */
export interface ValidatorOrigin {
  /** status.initContainerStatuses[].image and .imageID, as the kubelet wrote them ('' when absent). */
  readonly image: string;
  readonly imageId: string;
  /** The container's command, or undefined when the image's entrypoint runs. */
  readonly command: readonly string[] | undefined;
  /** The container's args (non-strings as ''), as the author wrote them. */
  readonly args: readonly string[];
  /** The env entries, whole (names, values, valueFrom), and whether envFrom, lifecycle hooks or volume mounts appear (with their paths). */
  readonly env: readonly unknown[];
  readonly envFrom: boolean;
  readonly lifecycle: boolean;
  readonly mountPaths: readonly string[];
  /** volumeDevices: a raw block device in the validator's filesystem, which no printer gives it. */
  readonly devices: boolean;
  /** spec.shareProcessNamespace or hostPID: another container could reach the validator's process. */
  readonly sharedProcesses: boolean;
  /** spec.hostNetwork: the validator would look at the node's network, not a pod's. */
  readonly hostNetwork: boolean;
  /** securityContext.runAsUser/runAsGroup of the container (Istio's drop-in reads the proxy's gid from it). */
  readonly identity: { readonly uid: number; readonly gid: number } | undefined;
}

function terminationOf(status: Json): ValidatorTermination | undefined {
  const last = obj(obj(status.lastState).terminated);
  const current = obj(obj(status.state).terminated);
  // The current state, when terminated, is the newest run (a pass after failures clears the pod);
  // otherwise a restarting container keeps its last failure in lastState.
  const chosen = typeof current.exitCode === 'number' ? current : last;
  if (typeof chosen.exitCode !== 'number') return undefined;
  // The same run moves from state to lastState when the container restarts: its id must not change.
  const runId = `${str(chosen.containerID)}@${str(chosen.finishedAt)}`;
  const finishedAtMs = Date.parse(str(chosen.finishedAt));
  return {
    exitCode: chosen.exitCode,
    message: str(chosen.message),
    runId,
    finishedAtMs: Number.isFinite(finishedAtMs) ? finishedAtMs : undefined,
  };
}

function originOf(spec: Json, container: Json, status: Json): ValidatorOrigin {
  const command = arr(container.command);
  return {
    image: str(status.image),
    imageId: str(status.imageID),
    command: container.command === undefined || container.command === null ? undefined : command.map(str),
    args: arr(container.args).map(str),
    env: arr(container.env),
    envFrom: arr(container.envFrom).length > 0,
    lifecycle: container.lifecycle !== undefined && container.lifecycle !== null,
    mountPaths: arr(container.volumeMounts).map((mount) => str(obj(mount).mountPath)),
    devices: container.volumeDevices !== undefined && container.volumeDevices !== null,
    sharedProcesses: spec.shareProcessNamespace === true || spec.hostPID === true,
    hostNetwork: spec.hostNetwork === true,
    identity: containerIdentity(container),
  };
}

/** The view of a pod that carries the validator init container, or undefined when it does not. */
export function podViewOf(pod: unknown, containerName: string): PodView | undefined {
  const root = obj(pod);
  const metadata = obj(root.metadata);
  const spec = obj(root.spec);
  const container = arr(spec.initContainers)
    .map(obj)
    .find((entry) => entry.name === containerName);
  if (!container) return undefined;
  const status = arr(obj(root.status).initContainerStatuses)
    .map(obj)
    .find((entry) => entry.name === containerName);
  return {
    ...podIdentityOf(metadata, spec),
    restartPolicy: str(spec.restartPolicy) || 'Always',
    validator: status ? terminationOf(status) : undefined,
    validatorOrigin: originOf(spec, container, status ?? {}),
  };
}

/**
 * A pod's owner for the breaker and the backoff: its controller's uid, scoped by the pod's
 * namespace, since the pod's author writes ownerReferences and could name another namespace's
 * controller to spend its recreations.
 */
export function ownerOf(view: PodView): BlockedBy {
  return { namespace: view.namespace, owner: `${view.namespace}/${view.ownerUid}` };
}
