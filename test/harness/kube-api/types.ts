import type { ResourceName } from './resources.js';

/** A Kubernetes object as JSON: only metadata is known to the stand-in; the rest is carried as is. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: KubeMeta;
  [field: string]: unknown;
}

export interface KubeMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** The resources the stand-in serves (resources.ts). */
export type Resource = ResourceName;

export type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  readonly rv: number;
  readonly type: WatchType;
  readonly resource: Resource;
  readonly object: KubeObject;
  /** The object before a MODIFIED change, so a field-selected watch can turn it into ADDED/DELETED. */
  readonly previous?: KubeObject;
}
