import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chainMeshPlugin,
  freshNamespace,
  kubectl,
  LINKERD_RULES,
  LINKERD_VALIDATOR,
  podsOf,
  setChain,
  waitFor,
  type PodStatus,
  validatorBackedOff,
} from './cluster.js';
import { installMultus, multusLog, removeMultus, setMultus, thinMultusConf } from './multus.js';
import { cniCheck, CONFLIST, deployMeshed, LINKERD_PLUGIN, NET_D, networkStatus } from './multus-node.js';

// Multus v4.2.2's real thin plugin (e2e/cluster/multus.ts) as the node's first CNI file on the real
// Kubernetes v1.33.13: containerd loads 00-multus.conf, and Multus runs the chain it delegates the
// pod's primary network to. That chain is the node's own (bridge, portmap) with or without the mesh
// plugin (linkerd-cni's stand-in writing linkerd-cni's recorded rules, as validator.test.ts), and the
// node's own conflist says the opposite each time: a pod passes or is blocked by what Multus ran,
// and cni-check, run as on the node, must judge Multus's delegate, not the file beside it.
const NS = 'ilk-multus';

/** The node's conflist as it is now (bridge, portmap, and the mesh plugin when chained). */
const nodeConflist = (): Record<string, unknown> =>
  JSON.parse(readFileSync(CONFLIST, 'utf8')) as Record<string, unknown>;

/** Multus's file and the node's conflist set, and a moment for containerd's watcher to reload them. */
async function node(multus: Record<string, unknown>, conflistMesh: boolean): Promise<void> {
  chainMeshPlugin(conflistMesh ? LINKERD_PLUGIN : undefined);
  setMultus(multus);
  await sleep(2_000);
}

const deploy = (name: string): Promise<void> => deployMeshed(name, NS);
const networksOf = (pod: PodStatus) => networkStatus(pod, NS, multusLog);
const validatorOf = (pod: PodStatus) => pod.status.initContainerStatuses?.find((c) => c.name === LINKERD_VALIDATOR);

async function running(app: string): Promise<PodStatus> {
  return waitFor(
    `${app}'s pod running with every container ready`,
    async () => {
      const [pod] = await podsOf(NS, `app=${app}`);
      return pod?.status.phase === 'Running' && pod.status.containerStatuses?.every((c) => c.ready) ? pod : undefined;
    },
    180_000,
  );
}

let before = '';
beforeAll(async () => {
  setChain(undefined);
  before = readFileSync(CONFLIST, 'utf8');
  // Built on first use (3-7 minutes cold; scripts/test.sh builds it before the projects).
  await installMultus();
  await freshNamespace(NS);
}, 600_000);
afterAll(async () => {
  // The pods go while Multus, with a working file, is still there to run their DEL: inline
  // delegates (Multus v4.2.2's DEL through a clusterNetwork conflist fails here with bridge's
  // "no IP ranges specified", and the pods would hang in Terminating).
  setChain(undefined);
  setMultus(thinMultusConf({ delegates: [nodeConflist()] }));
  await sleep(2_000);
  await kubectl(['delete', 'namespace', NS, '--ignore-not-found', '--wait=true', '--timeout=120s']).catch(
    () => undefined,
  );
  await removeMultus();
  setChain(undefined);
  // Exactly as before: the next cluster test finds the node's own chain.
  expect(readFileSync(CONFLIST, 'utf8')).toBe(before);
}, 300_000);

describe('thin Multus v4.2.2 (the real plugin) loaded first by containerd', () => {
  it('inline delegates[0] chains the mesh plugin (the node conflist does not): the validator passes, cni-check is healthy', async () => {
    setChain(LINKERD_RULES);
    const delegate = nodeConflist();
    await node(thinMultusConf({ delegates: [delegate] }), false);
    await deploy('inline');
    const pod = await running('inline');
    expect(validatorOf(pod)?.restartCount).toBe(0);
    // Multus itself ran the pod's primary network: its own report, the delegate's name, eth0.
    expect(await networksOf(pod)).toEqual([expect.objectContaining({ name: 'interlock-cluster', default: true })]);

    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings).toEqual([]);
    expect(exitCode).toBe(0);
    expect(verdict).toMatchObject({
      healthy: true,
      loads: { file: '00-multus.conf', chain: ['multus'] },
      delegate: { chain: ['bridge', 'portmap', 'linkerd-cni'] },
      observed: { agrees: true },
    });
  });

  it('clusterNetwork, the path of the conflist that chains the mesh plugin: the validator passes, cni-check is healthy', async () => {
    await node(thinMultusConf({ clusterNetwork: CONFLIST }), true);
    await deploy('cluster-network');
    const pod = await running('cluster-network');
    expect(validatorOf(pod)?.restartCount).toBe(0);
    expect(await networksOf(pod)).toEqual([expect.objectContaining({ name: 'interlock-cluster', default: true })]);

    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings).toEqual([]);
    expect(exitCode).toBe(0);
    expect(verdict).toMatchObject({
      healthy: true,
      loads: { file: '00-multus.conf', chain: ['multus'] },
      delegate: { file: '10-interlock-cluster.conflist', chain: ['bridge', 'portmap', 'linkerd-cni'] },
    });
  });

  it('inline delegates[0] without the mesh plugin (the node conflist has it): the validator blocks, cni-check says MeshMissing of the delegate', async () => {
    setChain(undefined);
    const delegate = nodeConflist();
    await node(thinMultusConf({ delegates: [delegate] }), true);
    await deploy('unmeshed');
    const { pod: blocked } = await validatorBackedOff(
      LINKERD_VALIDATOR,
      async () => (await podsOf(NS, 'app=unmeshed'))[0],
      180_000,
    );
    const terminated = validatorOf(blocked)?.lastState.terminated;
    expect(terminated?.exitCode).toBe(95);
    expect(terminated?.message).toMatch(/InterceptionMissing/);
    expect(blocked.status.containerStatuses?.every((c) => !c.ready)).toBe(true);
    expect(await networksOf(blocked)).toEqual([expect.objectContaining({ name: 'interlock-cluster', default: true })]);

    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings.map((finding) => finding.code)).toEqual(['MeshMissing']);
    // Linkerd's exit code for a failed check, as the validator's own.
    expect(exitCode).toBe(95);
    expect(verdict.healthy).toBe(false);
    expect(verdict.findings[0]?.message).toContain(
      `containerd loads 00-multus.conf, Multus's own file, which delegates the pods' primary network to its inline delegates[0] (network "interlock-cluster"), whose chain [bridge, portmap] has no linkerd-cni`,
    );
  });

  it("clusterNetwork, a network name Multus finds in its confDir (the node's): the validator passes, cni-check is healthy", async () => {
    await node(thinMultusConf({ clusterNetwork: 'interlock-cluster', confDir: NET_D }), true);
    await deploy('by-name');
    const pod = await running('by-name');
    expect(validatorOf(pod)?.restartCount).toBe(0);
    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings).toEqual([]);
    expect(exitCode).toBe(0);
    // Found in Multus's confDir, so named by its path there.
    expect(verdict.delegate).toMatchObject({ file: CONFLIST });
  });

  it('clusterNetwork, a network name with confDir unset: Multus looks in /etc/cni/multus/net.d and fails every ADD; cni-check says MultusDelegateMissing', async () => {
    await node(thinMultusConf({ clusterNetwork: 'interlock-cluster' }), true);
    await sandboxRefused('by-name-elsewhere', 'GetDefaultNetworks: failed to get clusterNetwork interlock-cluster');
    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings.map((finding) => finding.code)).toEqual(['MultusDelegateMissing']);
    expect(verdict.findings[0]?.message).toContain('no file of /etc/cni/multus/net.d carries a network of that name');
    expect(exitCode).toBe(95);
  });

  it('clusterNetwork without a kubeconfig: Multus ignores its delegates and fails every ADD; cni-check says MultusDelegateMissing', async () => {
    await node(thinMultusConf({ clusterNetwork: CONFLIST, kubeconfig: undefined, delegates: [nodeConflist()] }), true);
    await sandboxRefused('no-kubeconfig', 'GetDefaultNetworks: must have either Kubernetes config or delegates');
    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings.map((finding) => finding.code)).toEqual(['MultusDelegateMissing']);
    expect(verdict.findings[0]?.message).toContain('no kubeconfig');
    expect(exitCode).toBe(95);
  });
});

/**
 * The Deployment applied, and its pod refused a sandbox: the kubelet's FailedCreatePodSandBox
 * Event carries Multus's own error. (afterAll gives Multus a working file again before the
 * namespace goes, so that the pods' DEL through Multus succeeds.)
 */
async function sandboxRefused(app: string, multusError: string): Promise<void> {
  await deploy(app);
  const event = await waitFor(
    `${app}: FailedCreatePodSandBox naming Multus's error`,
    async () => {
      const events = JSON.parse(
        await kubectl(['get', 'events', '-n', NS, '--field-selector', 'reason=FailedCreatePodSandBox', '-o', 'json']),
      ) as { items: Array<{ involvedObject: { name: string }; message: string }> };
      return events.items.find((item) => item.involvedObject.name.startsWith(`${app}-`));
    },
    120_000,
  );
  expect(event.message).toContain(multusError);
  const [pod] = await podsOf(NS, `app=${app}`);
  expect(pod?.status.initContainerStatuses?.every((c) => c.state.waiting !== undefined) ?? true).toBe(true);
}
