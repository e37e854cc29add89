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
  validatorBackedOff,
} from './cluster.js';

// The validator against the real Kubernetes v1.33.13 (scripts/cluster.sh): the kubelet runs the
// init container `interlock inject` added, fills lastState.terminated.message from its
// termination file, backs it off into Init:CrashLoopBackOff; the API server takes the Warning
// Event it posts with the RBAC `interlock manifest --rbac` printed; the ReplicaSet controller
// replaces the pod the operator deletes once the mesh's plugin runs.
const NS = 'ilk-linkerd';
const VALIDATOR = LINKERD_VALIDATOR;
const deployment = linkerdDeployment('web', NS, 'linkerd.io/inject: enabled');

const validatorOf = (pod: PodStatus) => pod.status.initContainerStatuses?.find((c) => c.name === VALIDATOR);

beforeAll(async () => {
  setChain(undefined);
  await freshNamespace(NS);
}, 120_000);
afterAll(async () => {
  setChain(undefined);
  await kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
});

describe('Linkerd, on a real kubelet and API server', () => {
  let blocked: PodStatus;

  it('the mesh plugin never ran: Init:CrashLoopBackOff, exit 95 with the reason, and the Warning Event in kubectl describe', async () => {
    const injected = await interlock(['inject', '--mesh', 'linkerd', '--report-event', '--image', IMAGE], deployment);
    await kubectl(['apply', '-f', '-'], injected);
    ({ pod: blocked } = await validatorBackedOff(VALIDATOR, async () => (await podsOf(NS, 'app=web'))[0], 180_000));
    const terminated = validatorOf(blocked)?.lastState.terminated;
    expect(terminated?.exitCode).toBe(95);
    expect(terminated?.message).toMatch(/InterceptionMissing/);
    // The app never started.
    expect(blocked.status.containerStatuses?.every((c) => !c.ready)).toBe(true);

    const described = await waitFor(
      "Interlock's Warning Event",
      async () => {
        const text = await kubectl(['describe', 'pod', '-n', NS, blocked.metadata.name]);
        return /Warning\s+InterceptionMissing\s/.test(text) ? text : undefined;
      },
      60_000,
    );
    // The back-off as the kubelet reports it (the state flips to Running for each retry).
    expect(described).toMatch(/Back-off restarting failed container linkerd-network-validator/);
    expect(described).toMatch(/Exit Code:\s+95/);
    expect(described).toContain('InterceptionMissing');
    const events = JSON.parse(
      await kubectl([
        'get',
        'events',
        '-n',
        NS,
        '--field-selector',
        `involvedObject.uid=${blocked.metadata.uid}`,
        '-o',
        'json',
      ]),
    ) as {
      items: Array<{
        type: string;
        reason: string;
        source?: { component?: string };
        reportingComponent?: string;
        message: string;
      }>;
    };
    const mine = events.items.filter((event) => event.type === 'Warning' && event.reason === 'InterceptionMissing');
    expect(mine.length, JSON.stringify(events.items.map((e) => [e.type, e.reason, e.message]))).toBeGreaterThan(0);
    // The validator's own words: the address it probed and that nothing redirected it.
    expect(mine[0]?.message).toMatch(/was not redirected to port 4140/);
  });

  it('once the mesh plugin runs, the pod deleted is replaced by its ReplicaSet, and the new one passes and starts the app', async () => {
    setChain(LINKERD_RULES);
    await kubectl(['delete', 'pod', '-n', NS, blocked.metadata.name, '--wait=false']);
    const running = await waitFor(
      'a replacement pod whose app runs',
      async () => {
        const pods = await podsOf(NS, 'app=web');
        return pods.find(
          (pod) =>
            pod.metadata.uid !== blocked.metadata.uid &&
            pod.status.phase === 'Running' &&
            pod.status.containerStatuses?.every((c) => c.ready),
        );
      },
      180_000,
    );
    const validator = validatorOf(running);
    expect(validator?.restartCount).toBe(0);
    const terminated = JSON.parse(await kubectl(['get', 'pod', '-n', NS, running.metadata.name, '-o', 'json'])) as {
      status: {
        initContainerStatuses: Array<{ name: string; state: { terminated?: { exitCode: number; message?: string } } }>;
      };
    };
    const state = terminated.status.initContainerStatuses.find((c) => c.name === VALIDATOR)?.state.terminated;
    expect(state?.exitCode).toBe(0);
  });
});
