import { reasonWord } from '../node-agent/blocked.js';
import { capturingMesh, meshIdentities, type Mesh } from '../mesh/meshes.js';
import { imageRepository } from './image-reference.js';
import { at, list, record, text } from './json-path.js';
import { workloadOf, type Workload } from './workload.js';

/** What the data-plane checks read of one pod: where it is, which mesh holds it, its validator. */
export interface MeshedPod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly node: string | undefined;
  readonly mesh: Mesh;
  readonly workload: Workload;
  readonly validator: PodValidator | undefined;
}

/** The pod's Interlock validator: an init container named as its mesh's, running an Interlock image. */
export interface PodValidator {
  readonly container: string;
  readonly image: string;
  /** The newest finished run that failed, while no later run passed; undefined when none. */
  readonly failure: { readonly exitCode: number; readonly reason: string; readonly message: string } | undefined;
}

const containerNames = (pod: unknown, field: 'containers' | 'initContainers'): string[] =>
  list(at(pod, 'spec', field)).flatMap((container) => text(at(container, 'name')) ?? []);

/**
 * The mesh a pod is in: its sidecar mesh's proxy container (a regular or a native sidecar), else
 * the enrolment Istio ambient's node agent writes on it. A claim the pod carries, which is why a
 * meshed pod without a validator is a finding: nothing proves the claim.
 */
function meshOf(pod: unknown): Mesh | undefined {
  const names = [...containerNames(pod, 'containers'), ...containerNames(pod, 'initContainers')];
  const sidecar = meshIdentities().find(
    (identity) => identity.containers.proxy !== undefined && names.includes(identity.containers.proxy),
  );
  if (sidecar) return sidecar.name;
  const captured = capturingMesh();
  const annotations = record(at(pod, 'metadata', 'annotations'));
  if (captured && annotations[captured.capturedPods.enrolledAnnotation] === captured.capturedPods.enrolledValue)
    return captured.mesh;
  return undefined;
}

/** The failure that holds the pod now: the current run's, else (restarting, backing off) the last one's. */
function failureOf(status: unknown): PodValidator['failure'] {
  const current = at(status, 'state', 'terminated');
  const run = current !== undefined ? current : at(status, 'lastState', 'terminated');
  const exitCode = at(run, 'exitCode');
  if (typeof exitCode !== 'number' || exitCode === 0) return undefined;
  const message = (text(at(run, 'message')) ?? '').trim();
  return { exitCode, reason: message === '' ? `exit ${exitCode}` : reasonWord(message), message };
}

function validatorOf(pod: unknown, mesh: Mesh, repositories: ReadonlySet<string>): PodValidator | undefined {
  const wanted = meshIdentities().find((identity) => identity.name === mesh)?.containers.validator;
  const container = list(at(pod, 'spec', 'initContainers')).find(
    (entry) => text(at(entry, 'name')) === wanted && repositories.has(imageRepository(text(at(entry, 'image')) ?? '')),
  );
  if (!container || wanted === undefined) return undefined;
  const status = list(at(pod, 'status', 'initContainerStatuses')).find((entry) => at(entry, 'name') === wanted);
  return { container: wanted, image: text(at(container, 'image')) ?? '', failure: failureOf(status) };
}

/** The meshed pods of a pod list, each with its Interlock validator (given Interlock's image repositories). */
export function meshedPods(pods: unknown, repositories: ReadonlySet<string>): MeshedPod[] {
  return list(at(pods, 'items')).flatMap((pod) => {
    const mesh = meshOf(pod);
    if (mesh === undefined || at(pod, 'status', 'phase') === 'Succeeded') return [];
    return [
      {
        namespace: text(at(pod, 'metadata', 'namespace')) ?? '',
        name: text(at(pod, 'metadata', 'name')) ?? '',
        uid: text(at(pod, 'metadata', 'uid')) ?? '',
        node: text(at(pod, 'spec', 'nodeName')),
        mesh,
        workload: workloadOf(pod),
        validator: validatorOf(pod, mesh, repositories),
      },
    ];
  });
}
