import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshNamespace,
  IMAGE,
  interlock,
  kubectl,
  linkerdDeployment,
  LINKERD_RULES,
  LINKERD_VALIDATOR,
  podsOf,
  setChain,
  waitFor,
  type PodStatus,
} from './cluster.js';

// The node agent as `interlock manifest --node-agent --mesh linkerd` prints it, on the real
// kubelet and API server: it sees the validator's failure in the pod's status, deletes the pod
// with preconditions, the ReplicaSet controller recreates it, and once the mesh's plugin runs the
// new pod passes. The Events are the API server's, read back with kubectl.
const NS = 'ilk-repair';
const VALIDATOR = LINKERD_VALIDATOR;
const deployment = linkerdDeployment('api', NS);

let agent: string;

const reasons = async (): Promise<string[]> =>
  (
    JSON.parse(await kubectl(['get', 'events', '-n', NS, '-o', 'json'])) as { items: Array<{ reason: string }> }
  ).items.map((event) => event.reason);

beforeAll(async () => {
  setChain(undefined);
  agent = await interlock(['manifest', '--node-agent', '--mesh', 'linkerd', '--image', IMAGE]);
  await kubectl(['apply', '-f', '-'], agent);
  await waitFor(
    'the node agent to be ready',
    async () =>
      (await kubectl([
        'get',
        'daemonset',
        '-A',
        '-l',
        'app.kubernetes.io/part-of=interlock',
        '-o',
        'jsonpath={.items[*].status.numberReady}',
      ])) === '1',
    180_000,
  );
  await freshNamespace(NS);
}, 300_000);
afterAll(async () => {
  setChain(undefined);
  await kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
  await kubectl(['delete', '-f', '-', '--wait=false'], agent).catch(() => undefined);
});

describe('the node agent, on a real cluster', () => {
  it('deletes the blocked pod, the ReplicaSet recreates it, and once the plugin runs the replacement passes', async () => {
    await kubectl(['apply', '-f', '-'], await interlock(['inject', '--mesh', 'linkerd', '--image', IMAGE], deployment));
    const [first] = await waitFor('the first pod', async () => (await podsOf(NS, 'app=api')).slice(0, 1), 60_000);
    const firstUid = (first as PodStatus).metadata.uid;
    await waitFor(
      'the agent to recreate the blocked pod',
      async () => (await reasons()).includes('InterlockRecreating'),
      180_000,
    );
    await waitFor(
      'a replacement pod from the ReplicaSet',
      async () => (await podsOf(NS, 'app=api')).some((pod) => pod.metadata.uid !== firstUid),
      120_000,
    );
    setChain(LINKERD_RULES);
    const running = await waitFor(
      'a pod whose validator passed and whose app runs',
      async () =>
        (await podsOf(NS, 'app=api')).find(
          (pod) =>
            pod.status.phase === 'Running' &&
            pod.status.containerStatuses?.every((c) => c.ready) &&
            pod.status.initContainerStatuses?.find((c) => c.name === VALIDATOR)?.restartCount === 0,
        ),
      240_000,
    );
    expect(running.metadata.uid).not.toBe(firstUid);
    // The pod the agent deleted is gone, not only replaced.
    expect((await podsOf(NS, 'app=api')).map((pod) => pod.metadata.uid)).not.toContain(firstUid);
  });
});
