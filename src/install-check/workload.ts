import { at, list, record, text } from './json-path.js';

/** What recreates a pod, as `kubectl rollout restart` names it; a pod no controller owns is its own. */
export interface Workload {
  readonly kind: 'deployment' | 'statefulset' | 'daemonset' | 'replicaset' | 'job' | 'pod';
  readonly name: string;
}

const KINDS: Readonly<Record<string, Workload['kind']>> = {
  StatefulSet: 'statefulset',
  DaemonSet: 'daemonset',
  Job: 'job',
};

/**
 * The pod's controller: a ReplicaSet named `<deployment>-<pod-template-hash>` (the hash the pod's
 * label carries) is its Deployment's, as the Deployment controller names it.
 */
export function workloadOf(pod: unknown): Workload {
  const owner = list(at(pod, 'metadata', 'ownerReferences')).find((reference) => at(reference, 'controller') === true);
  const kind = text(at(owner, 'kind'));
  const name = text(at(owner, 'name'));
  if (kind === undefined || name === undefined) return { kind: 'pod', name: text(at(pod, 'metadata', 'name')) ?? '' };
  if (kind === 'ReplicaSet') {
    const hash = record(at(pod, 'metadata', 'labels'))['pod-template-hash'];
    return hash !== undefined && name.endsWith(`-${hash}`)
      ? { kind: 'deployment', name: name.slice(0, -hash.length - 1) }
      : { kind: 'replicaset', name };
  }
  const known = KINDS[kind];
  return known ? { kind: known, name } : { kind: 'pod', name: text(at(pod, 'metadata', 'name')) ?? '' };
}

/**
 * The command that makes new pods of it through admission (where the webhook adds the validator):
 * a rollout restart, a ReplicaSet's or Job's pod deleted (its controller replaces it), a bare pod
 * replaced by itself.
 */
export function recreateCommand(namespace: string, workload: Workload, pod: string): string {
  if (workload.kind === 'deployment' || workload.kind === 'statefulset' || workload.kind === 'daemonset')
    return `kubectl -n ${namespace} rollout restart ${workload.kind}/${workload.name}`;
  if (workload.kind === 'pod') return `kubectl -n ${namespace} get pod ${pod} -o yaml | kubectl replace --force -f -`;
  return `kubectl -n ${namespace} delete pod ${pod}`;
}
