import type { Mesh } from '../mesh/meshes.js';
import type { Workload } from './workload.js';

/** Where a finding is: the pod, its namespace and node, and what recreates it. */
interface PodPlace {
  readonly namespace: string;
  readonly pod: string;
  readonly node: string | undefined;
  readonly workload: Workload;
}

/**
 * What the data-plane checks find, one pod or workload each; `reason` is the one word a script
 * keys on (a blocked pod's is its validator's own reason, from its termination message).
 */
export type DataPlaneFinding =
  | (PodPlace & { readonly kind: 'unvalidated'; readonly reason: 'NoValidator'; readonly mesh: Mesh })
  | (PodPlace & {
      readonly kind: 'blocked';
      readonly reason: string;
      readonly container: string;
      readonly exitCode: number;
      readonly message: string;
    })
  | (PodPlace & {
      readonly kind: 'capture-lost';
      readonly reason: string;
      readonly message: string;
      readonly count: number;
    })
  | (PodPlace & {
      readonly kind: 'image-skew';
      readonly reason: 'ValidatorImageSkew';
      readonly image: string;
      readonly expected: string;
    });
