/**
 * What the agent keeps of a pod: identity, owner, and the validator container's last
 * termination. Pods are reduced to this on arrival, so the cache of 110 pods stays small.
 */
export interface ValidatorTermination {
  readonly exitCode: number;
  readonly message: string;
  /** Identifies this one run of the container, so the same failure is never handled twice. */
  readonly runId: string;
}

export interface PodView {
  /** `namespace/name` */
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly nodeName: string;
  readonly restartPolicy: string;
  /** The controller's kind and uid (`Job`, `ReplicaSet`), or the pod itself when it has none. */
  readonly ownerKind: string;
  readonly ownerUid: string;
  readonly terminating: boolean;
  /** lastState.terminated, else state.terminated: the validator's most recent finished run. */
  readonly validator: ValidatorTermination | undefined;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

function terminationOf(status: Json): ValidatorTermination | undefined {
  const last = obj(obj(status.lastState).terminated);
  const current = obj(obj(status.state).terminated);
  // The current state, when terminated, is the newest run (a pass after failures clears the pod);
  // otherwise a restarting container keeps its last failure in lastState.
  const chosen = typeof current.exitCode === 'number' ? current : last;
  if (typeof chosen.exitCode !== 'number') return undefined;
  // The same run moves from state to lastState when the container restarts: its id must not change.
  const runId = `${str(chosen.containerID)}@${str(chosen.finishedAt)}`;
  return { exitCode: chosen.exitCode, message: str(chosen.message), runId };
}

/** The view of a pod that carries the validator init container, or undefined when it does not. */
export function podViewOf(pod: unknown, containerName: string): PodView | undefined {
  const root = obj(pod);
  const metadata = obj(root.metadata);
  const spec = obj(root.spec);
  const carries = arr(spec.initContainers).some((container) => obj(container).name === containerName);
  if (!carries) return undefined;
  const status = arr(obj(root.status).initContainerStatuses)
    .map(obj)
    .find((entry) => entry.name === containerName);
  const controller = arr(metadata.ownerReferences)
    .map(obj)
    .find((reference) => reference.controller === true);
  const name = str(metadata.name);
  const namespace = str(metadata.namespace);
  const uid = str(metadata.uid);
  return {
    key: `${namespace}/${name}`,
    name,
    namespace,
    uid,
    resourceVersion: str(metadata.resourceVersion),
    nodeName: str(spec.nodeName),
    restartPolicy: str(spec.restartPolicy) || 'Always',
    ownerKind: controller ? str(controller.kind) : 'Pod',
    ownerUid: controller ? str(controller.uid) : uid,
    terminating: typeof metadata.deletionTimestamp === 'string',
    validator: status ? terminationOf(status) : undefined,
  };
}
