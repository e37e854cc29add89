/** A pod object as the API sends it: only fields read through these guards are trusted in shape. */
export type Json = Record<string, unknown>;
export const obj = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
export const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Who a pod is and who owns it: what the agent and its re-check both keep of every pod. */
export interface PodIdentity {
  /** `namespace/name` */
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly nodeName: string;
  /** The controller's kind and uid (`Job`, `ReplicaSet`), or the pod itself when it has none. */
  readonly ownerKind: string;
  readonly ownerUid: string;
  readonly terminating: boolean;
}

export function podIdentityOf(metadata: Json, spec: Json): PodIdentity {
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
    ownerKind: controller ? str(controller.kind) : 'Pod',
    ownerUid: controller ? str(controller.uid) : uid,
    terminating: typeof metadata.deletionTimestamp === 'string',
  };
}
