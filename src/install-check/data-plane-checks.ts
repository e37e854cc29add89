import { EXIT } from '../config/exit-codes.js';
import type { DataPlaneFinding } from './data-plane-finding.js';
import { sameImage } from './image-reference.js';
import { installImages } from './install-images.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { valueOf, type Found, type InstallSnapshot } from './install-snapshot.js';
import { at, count, list, text } from './json-path.js';
import { meshedPods, type MeshedPod } from './meshed-pod.js';
import { recreateCommand } from './workload.js';
import { webhookInstalled, unreadable } from './webhook-checks.js';

/** Findings listed one by one per check; the rest are counted, so a broken cluster's report stays readable. */
const LISTED = 20;

const place = (pod: MeshedPod) => ({
  namespace: pod.namespace,
  pod: pod.name,
  node: pod.node,
  workload: pod.workload,
});
const where = (pod: MeshedPod) => `pod ${pod.namespace}/${pod.name}${pod.node ? ` on node ${pod.node}` : ''}`;
const replaceCommand = (pod: MeshedPod) =>
  pod.workload.kind === 'pod'
    ? recreateCommand(pod.namespace, pod.workload, pod.name)
    : `kubectl -n ${pod.namespace} delete pod ${pod.name}`;

/**
 * `linkerd check --proxy`'s questions asked of Interlock: which meshed pods run no Interlock
 * validator, which are blocked now and why, which lost their capture after starting, which
 * workloads still run another validator image than the install's.
 */
export function dataPlaneChecks(snapshot: InstallSnapshot): InstallCheckResult[] {
  const read = snapshot.dataPlane;
  if (read === undefined) return [];
  if (read.pods.state !== 'found') return [unreadable('data-plane', 'pods', 'the pods', read.pods)];
  const images = installImages(snapshot);
  if (images.expected === undefined)
    return [installCheck('data-plane', 'pods', 'skip', "no installed part names Interlock's image")];
  const pods = meshedPods(read.pods.value, images.repositories);
  return [
    ...listed(
      'validator',
      unvalidated(snapshot, pods, images.expected),
      `${pods.length} meshed pods, each with Interlock's validator`,
    ),
    ...listed('blocked', blocked(pods), 'no meshed pod is blocked by its validator now'),
    ...lostChecks(read.lostEvents, pods),
    ...listed('images', skewed(pods, images.expected), `every validator runs ${images.expected}`),
  ];
}

function listed(id: string, failures: readonly InstallCheckResult[], passed: string): InstallCheckResult[] {
  if (failures.length === 0) return [installCheck('data-plane', id, 'pass', passed)];
  if (failures.length <= LISTED) return [...failures];
  const more = failures.length - LISTED;
  return [
    ...failures.slice(0, LISTED),
    installCheck('data-plane', id, 'fail', `and ${more} more like these (-o json lists the first ${LISTED})`),
  ];
}

function unvalidated(snapshot: InstallSnapshot, pods: readonly MeshedPod[], image: string): InstallCheckResult[] {
  const webhook = webhookInstalled(snapshot);
  return pods
    .filter((pod) => pod.validator === undefined)
    .map((pod) => {
      const finding: DataPlaneFinding = { kind: 'unvalidated', reason: 'NoValidator', mesh: pod.mesh, ...place(pod) };
      const recreate = recreateCommand(pod.namespace, pod.workload, pod.name);
      const fix = webhook
        ? `${recreate}  # the webhook adds the validator to the new pods, unless its selectors leave ${pod.namespace} out`
        : `interlock manifest --webhook --namespace ${snapshot.webhookNamespace} --image ${image} | kubectl apply -f - && ${recreate}  # cert-manager issues its certificate (else print it with --ca-bundle)`;
      const message = `${where(pod)} is in ${pod.mesh} but runs no Interlock validator: nothing proves its traffic is captured`;
      return installCheck('data-plane', 'validator', 'fail', message, fix, finding);
    });
}

function blocked(pods: readonly MeshedPod[]): InstallCheckResult[] {
  return pods.flatMap((pod) => {
    const failure = pod.validator?.failure;
    if (!pod.validator || !failure) return [];
    const { container } = pod.validator;
    const finding: DataPlaneFinding = { kind: 'blocked', container, ...failure, ...place(pod) };
    const fix =
      failure.exitCode === EXIT.invalidConfig
        ? `kubectl -n ${pod.namespace} logs ${pod.name} -c ${container} --previous  # the validator refused its own arguments: the pod's owner must fix them`
        : `${replaceCommand(pod)}  # once the mesh's CNI plugin runs on node ${pod.node ?? '(unscheduled)'}: docs/troubleshooting.md, ${failure.reason}`;
    const firstLine = failure.message.split('\n')[0] ?? '';
    const message = `${where(pod)} is blocked: ${container} exited ${failure.exitCode}, ${firstLine || failure.reason}`;
    return [installCheck('data-plane', 'blocked', 'fail', message, fix, finding)];
  });
}

/** Warnings the node agent's re-check posted on pods that still run (a gone pod's Event is history). */
function lostChecks(events: readonly Found[], pods: readonly MeshedPod[]): InstallCheckResult[] {
  const unread = events.find((found) => found.state !== 'found');
  if (unread) return [unreadable('data-plane', 'capture', "the re-check's Events", unread)];
  const byUid = new Map(pods.map((pod) => [pod.uid, pod]));
  const reported = new Set<string>();
  const failures = events.flatMap((found) =>
    list(at(valueOf(found), 'items')).flatMap((event) => {
      const pod = byUid.get(text(at(event, 'involvedObject', 'uid')) ?? '');
      if (!pod || reported.has(pod.uid)) return [];
      reported.add(pod.uid);
      const reason = text(at(event, 'reason')) ?? 'CaptureLost';
      const message = (text(at(event, 'message')) ?? '').split('\n')[0] ?? '';
      const finding: DataPlaneFinding = {
        kind: 'capture-lost',
        reason,
        message,
        count: count(at(event, 'count')),
        ...place(pod),
      };
      const fix = `${replaceCommand(pod)}  # a new sandbox gets the mesh CNI's rules again; kubectl -n ${pod.namespace} describe pod ${pod.name} shows the Event`;
      return [
        installCheck(
          'data-plane',
          'capture',
          'fail',
          `${where(pod)} lost its capture after it started (${reason}): ${message}`,
          fix,
          finding,
        ),
      ];
    }),
  );
  return listed('capture', failures, 'no running meshed pod has a CaptureLost or ZtunnelNotListening Event');
}

function skewed(pods: readonly MeshedPod[], expected: string): InstallCheckResult[] {
  const seen = new Set<string>();
  return pods.flatMap((pod) => {
    const image = pod.validator?.image;
    if (image === undefined || sameImage(image, expected)) return [];
    const key = `${pod.namespace}/${pod.workload.kind}/${pod.workload.name}/${image}`;
    if (seen.has(key)) return [];
    seen.add(key);
    const finding: DataPlaneFinding = {
      kind: 'image-skew',
      reason: 'ValidatorImageSkew',
      image,
      expected,
      ...place(pod),
    };
    const what =
      pod.workload.kind === 'pod'
        ? `pod ${pod.namespace}/${pod.name}`
        : `${pod.workload.kind} ${pod.namespace}/${pod.workload.name}`;
    const message = `${what} runs the validator ${image}, not the install's ${expected} (pod ${pod.name})`;
    const fix = recreateCommand(pod.namespace, pod.workload, pod.name);
    return [installCheck('data-plane', 'images', 'fail', message, fix, finding)];
  });
}
