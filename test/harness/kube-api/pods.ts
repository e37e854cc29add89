import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from './types.js';

// A bundled copy (the bench) says where the fixtures are; the sources find them next door.
const FIXTURES = process.env.INTERLOCK_KUBE_FIXTURES ?? fileURLToPath(new URL('../../fixtures/kube/', import.meta.url));
const load = (name: string): KubeObject => JSON.parse(readFileSync(`${FIXTURES}${name}`, 'utf8')) as KubeObject;

export interface PodShape {
  readonly name: string;
  readonly namespace?: string;
  readonly nodeName?: string;
  /** The validator init container's name (default linkerd-network-validator, as in the fixtures). */
  readonly container?: string;
  readonly exitCode?: number;
  readonly message?: string;
  /** The controller's uid (ReplicaSet or Job); the fixture's when absent, so pods share an owner. */
  readonly ownerUid?: string;
  /** When the validator's failed run ended (a new value is a new run, as after a restart). */
  readonly finishedAt?: string;
  /** The validator's image, in the spec and as the kubelet reports it (status image and imageID). */
  readonly image?: string;
  /** The validator's command (none by default: the image's entrypoint). */
  readonly command?: readonly string[];
  /** No ownerReferences: a bare pod, which no controller recreates. */
  readonly bare?: boolean;
  /** The validator's args, env and volumeDevices (the fixture's args, no env, no devices by default). */
  readonly args?: readonly string[];
  readonly env?: readonly Record<string, unknown>[];
  readonly volumeDevices?: readonly Record<string, unknown>[];
}

/** A kubelet-written container termination: the fields the agent reads and the tests rewrite. */
export type Terminated = {
  exitCode: number;
  message?: string;
  reason?: string;
  finishedAt?: string;
  [field: string]: unknown;
};

/** A container state as the kubelet writes it: one of terminated, waiting or running (or none). */
export type ContainerState = {
  terminated?: Terminated;
  waiting?: { reason: string; message?: string };
  running?: Record<string, unknown>;
};

export type ContainerStatus = {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  restartCount: number;
  image?: string;
  imageID?: string;
};

/** A pod of the fixtures: the fields of kubelet's shape the tests read and rewrite; the rest is carried as is. */
export type FixturePod = KubeObject & {
  spec: { nodeName: string; initContainers: { name: string; image?: string; command?: string[] }[] };
  status: { phase: string; initContainerStatuses: ContainerStatus[] };
};

function reshape(fixture: KubeObject, shape: PodShape): FixturePod {
  const pod = structuredClone(fixture) as FixturePod;
  pod.metadata.name = shape.name;
  pod.metadata.namespace = shape.namespace ?? 'default';
  pod.spec.nodeName = shape.nodeName ?? 'node-a';
  if (shape.ownerUid) (pod.metadata.ownerReferences as { uid: string }[])[0]!.uid = shape.ownerUid;
  if (shape.bare) delete pod.metadata.ownerReferences;
  const container = shape.container ?? 'linkerd-network-validator';
  const spec = pod.spec.initContainers[0]!;
  spec.name = container;
  if (shape.command) spec.command = [...shape.command];
  const fields = spec as Record<string, unknown>;
  if (shape.args) fields.args = [...shape.args];
  if (shape.env) fields.env = structuredClone(shape.env);
  if (shape.volumeDevices) fields.volumeDevices = structuredClone(shape.volumeDevices);
  const status = pod.status.initContainerStatuses[0]!;
  status.name = container;
  if (shape.image) {
    spec.image = shape.image;
    status.image = shape.image;
    status.imageID = `${shape.image.replace(/[:@].*$/, '')}@sha256:${'5e'.repeat(32)}`;
  }
  const terminated = (status.lastState.terminated ?? status.state.terminated)!;
  if (shape.exitCode !== undefined) terminated.exitCode = shape.exitCode;
  if (shape.message !== undefined) terminated.message = shape.message;
  if (shape.finishedAt !== undefined) terminated.finishedAt = shape.finishedAt;
  const waiting = status.state.waiting;
  if (waiting?.message)
    waiting.message = waiting.message.replace(
      /container=\S+ pod=\S+/,
      `container=${container} pod=${shape.name}_${pod.metadata.namespace}`,
    );
  return pod;
}

/** A Deployment's pod whose validator failed and restarts: CrashLoopBackOff with lastState.terminated. */
export const crashLoopPod = (shape: PodShape): FixturePod => reshape(load('pod-init-crashloop.json'), shape);

/** A Job's pod (restartPolicy Never) whose validator failed once: state.terminated, phase Failed. */
export const failedJobPod = (shape: PodShape): FixturePod => reshape(load('pod-init-failed-never.json'), shape);

/** The same pod with its validator passed and the app running: nothing to do. */
export function healthyPod(shape: PodShape): FixturePod {
  const pod = crashLoopPod(shape);
  const status = pod.status.initContainerStatuses[0]!;
  status.state = {
    terminated: {
      exitCode: 0,
      reason: 'Completed',
      startedAt: '2026-11-20T10:00:02Z',
      finishedAt: '2026-11-20T10:00:03Z',
      containerID: 'containerd://1f2e3d4c5b6a79880716253443526170819a2b3c4d5e6f708192a3b4c5d6e7f8',
    },
  };
  status.lastState = {};
  status.restartCount = 0;
  pod.status.phase = 'Running';
  return pod;
}

export const nodeObject = (name: string): KubeObject => {
  const node = load('node.json');
  node.metadata.name = name;
  return node;
};
