import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chainMeshPlugin,
  freshNamespace,
  IMAGE,
  kubectl,
  LINKERD_VALIDATOR,
  podsOf,
  setChain,
  waitFor,
  type PodStatus,
  validatorBackedOff,
} from './cluster.js';
import { installMultus, makeThickRunDir, removeMultus, removeThickMultus, thickMultusDaemonSet } from './multus.js';
import { cniCheck, CONFLIST, deployMeshed, LINKERD_PLUGIN, NET_D, networkStatus } from './multus-node.js';

// Multus v4.2.2's thick plugin on the real Kubernetes v1.33.13: multus-daemon as upstream's
// DaemonSet runs it (e2e/cluster/multus.ts), which writes the multus-shim file 00-multus.conf
// (clusterNetwork: the directory's first other file, the node's conflist), and multus-shim in the
// node's bin dir, which containerd runs and which hands each ADD to the daemon over its socket. The
// daemon runs the node's conflist: with the mesh plugin (linkerd-cni's stand-in) or without.
const NS = 'ilk-multus-thick';
const SHIM_FILE = join(NET_D, '00-multus.conf');

const deploy = (name: string): Promise<void> => deployMeshed(name, NS);
const networksOf = (pod: PodStatus) => networkStatus(pod, NS, daemonLogs);
const validatorOf = (pod: PodStatus) => pod.status.initContainerStatuses?.find((c) => c.name === LINKERD_VALIDATOR);

async function daemonLogs(): Promise<string> {
  return kubectl(['logs', '-n', 'kube-system', 'daemonset/kube-multus-ds', '--tail=40']).catch(String);
}

let before = '';
beforeAll(async () => {
  setChain(undefined);
  before = readFileSync(CONFLIST, 'utf8');
  const built = await installMultus();
  makeThickRunDir();
  await kubectl(['apply', '-f', '-'], thickMultusDaemonSet(built, IMAGE));
  // The daemon writes the shim's file once it serves its socket.
  await waitFor('multus-daemon writing 00-multus.conf', async () => existsSync(SHIM_FILE) || undefined, 120_000).catch(
    async (error: unknown) => {
      throw new Error(`${String(error)}\n${await daemonLogs()}`);
    },
  );
  await freshNamespace(NS);
}, 600_000);
afterAll(async () => {
  // The pods go while the daemon is there to run their DEL.
  setChain(undefined);
  await kubectl(['delete', 'namespace', NS, '--ignore-not-found', '--wait=true', '--timeout=120s']).catch(
    () => undefined,
  );
  await removeThickMultus();
  await removeMultus();
  setChain(undefined);
  expect(existsSync(SHIM_FILE)).toBe(false);
  expect(readFileSync(CONFLIST, 'utf8')).toBe(before);
}, 300_000);

describe('thick Multus v4.2.2 (the real multus-daemon and multus-shim)', () => {
  it("the daemon's shim file delegates to the node's conflist, the mesh plugin chained: the validator passes, cni-check is healthy", async () => {
    const shim = JSON.parse(readFileSync(SHIM_FILE, 'utf8')) as Record<string, unknown>;
    expect(shim).toMatchObject({ type: 'multus-shim', clusterNetwork: CONFLIST });
    chainMeshPlugin(LINKERD_PLUGIN);
    await sleep(2_000);
    await deploy('thick');
    const pod = await waitFor(
      "thick's pod running with every container ready",
      async () => {
        const [found] = await podsOf(NS, 'app=thick');
        return found?.status.phase === 'Running' && found.status.containerStatuses?.every((c) => c.ready)
          ? found
          : undefined;
      },
      180_000,
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await daemonLogs()}`);
    });
    expect(validatorOf(pod)?.restartCount).toBe(0);
    expect(await networksOf(pod)).toEqual([expect.objectContaining({ name: 'interlock-cluster', default: true })]);

    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings).toEqual([]);
    expect(exitCode).toBe(0);
    expect(verdict).toMatchObject({
      healthy: true,
      loads: { file: '00-multus.conf', chain: ['multus-shim'] },
      delegate: { file: '10-interlock-cluster.conflist', chain: ['bridge', 'portmap', 'linkerd-cni'] },
    });
  });

  it("the node's conflist without the mesh plugin: the validator blocks, cni-check says MeshMissing of Multus's delegate", async () => {
    chainMeshPlugin(undefined);
    await sleep(2_000);
    await deploy('thick-unmeshed');
    const { pod: blocked } = await validatorBackedOff(
      LINKERD_VALIDATOR,
      async () => (await podsOf(NS, 'app=thick-unmeshed'))[0],
      180_000,
    );
    expect(validatorOf(blocked)?.lastState.terminated?.exitCode).toBe(95);
    expect(validatorOf(blocked)?.lastState.terminated?.message).toMatch(/InterceptionMissing/);
    expect(await networksOf(blocked)).toEqual([expect.objectContaining({ name: 'interlock-cluster' })]);

    const { exitCode, verdict } = await cniCheck();
    expect(verdict.findings.map((finding) => finding.code)).toEqual(['MeshMissing']);
    expect(verdict.findings[0]).toMatchObject({ file: '10-interlock-cluster.conflist' });
    expect(verdict.findings[0]?.message).toContain(
      "containerd loads 00-multus.conf, Multus's own file, which delegates the pods' primary network to 10-interlock-cluster.conflist",
    );
    expect(exitCode).toBe(95);
  });
});
