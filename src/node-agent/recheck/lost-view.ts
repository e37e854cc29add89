import type { Blocked } from '../blocked.js';
import type { PodView } from '../pod-view.js';
import type { RecheckPod } from './meshed-pod.js';

/** A lost pod as the agent's recreation path sees a blocked one: identity and owner; no validator run. */
export function lostView(pod: RecheckPod): PodView {
  return {
    key: pod.key,
    name: pod.name,
    namespace: pod.namespace,
    uid: pod.uid,
    resourceVersion: pod.resourceVersion,
    nodeName: pod.nodeName,
    restartPolicy: 'Always',
    ownerKind: pod.ownerKind,
    ownerUid: pod.ownerUid,
    terminating: pod.terminating,
    validator: undefined,
    validatorOrigin: {
      image: '',
      imageId: '',
      command: undefined,
      args: [],
      env: [],
      envFrom: false,
      lifecycle: false,
      mountPaths: [],
      devices: false,
      sharedProcesses: false,
      hostNetwork: false,
      identity: undefined,
    },
  };
}

/** What decide() needs of a lost pod: recreatable (a new sandbox gets the CNI's rules again), by reason CaptureLost. */
export const LOST_RUN: Blocked = {
  reason: 'CaptureLost',
  metricReason: 'Other',
  message: '',
  recreatable: true,
  misconfigured: false,
  runId: 'recheck:',
};
