import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CniVerdict } from '../../src/cni/audit-cni.js';
import { watchCniConfig } from '../../src/cni/watch-cni-config.js';
import type { Result } from '../../src/reason/result.js';
import type { ContainerdNode } from './containerd-node.js';
import {
  bridgePlugin,
  cniCheck,
  meshPlugin,
  observePod,
  podIdentity,
  removeBridges,
  startCniNode,
  subnetOf,
  validatePod,
} from './cni-node.js';

// linkerd2#2219 and issue 12's table, replayed with Debian's containerd 1.6 (`ctr run --cni`: go-cni
// and libcni choose and run the configuration), Debian's CNI plugins, and the image's
// `interlock validate` in each pod as an init container runs it.
let node: ContainerdNode;
beforeAll(async () => {
  node = await startCniNode();
}, 300_000);
afterAll(async () => {
  await node?.stop();
});
afterEach(async () => {
  await node.clearConfigs();
  await removeBridges(node);
});

const conflist = (name: string, plugins: unknown[], cniVersion = '1.0.0') =>
  JSON.stringify({ cniVersion, name, plugins }, null, 2);
const withMesh = (index: number, cniVersion = '1.0.0') =>
  conflist(
    'k8s-pod-network',
    [bridgePlugin(index), { type: 'portmap', capabilities: { portMappings: true } }, meshPlugin()],
    cniVersion,
  );
const withoutMesh = (index: number) =>
  conflist('k8s-pod-network', [bridgePlugin(index), { type: 'portmap', capabilities: { portMappings: true } }]);

describe('issue 12 scenarios with a real containerd', () => {
  it('S1: bridge + host-local with the mesh stand-in chained: validate passes, cni-check healthy, and it predicted the file containerd used', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(1));
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(0);
    expect(check.verdict.loads).toMatchObject({
      file: '10-primary.conflist',
      chain: ['bridge', 'portmap', 'linkerd-cni'],
    });
    const observed = await observePod(node);
    expect(observed.eth0?.startsWith(subnetOf(1).replace('.0/24', '.'))).toBe(true);
    // As an init container: uid 65534, no capability in any set.
    const identity = await podIdentity(node);
    expect(identity).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
      expect(identity).toMatch(new RegExp(`^${set}:\\s+0{16}$`, 'm'));
    const validate = await validatePod(node);
    expect(validate.stdout + validate.stderr).toMatch(/Intercepted/);
    expect(validate.exitCode).toBe(0);
  });

  it('S2: a standalone mesh .conf sorts first: validate fails with PodNetworkMissing; cni-check names that file and why', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(2));
    await node.writeConfig(
      '05-linkerd-cni.conf',
      JSON.stringify({
        cniVersion: '0.3.1',
        name: 'linkerd-cni',
        type: 'linkerd-cni',
        rulesFile: meshPlugin().rulesFile,
      }),
    );
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(95);
    expect(check.verdict.loads?.file).toBe('05-linkerd-cni.conf');
    expect(check.verdict.findings[0]).toMatchObject({
      code: 'MeshFirst',
      message: expect.stringContaining('containerd loads 05-linkerd-cni.conf (it sorts before 10-primary.conflist)'),
    });
    expect(check.verdict.findings[0]?.message).toContain('which has no IPAM: pods on this node get no address');
    const observed = await observePod(node);
    expect(observed.run.exitCode).toBe(0);
    expect(observed.eth0).toBeUndefined();
    const validate = await validatePod(node);
    expect(validate.stdout + validate.stderr).toMatch(/PodNetworkMissing/);
    expect(validate.exitCode).toBe(95);
  });

  it('S3: the mesh plugin not in the conflist yet: validate fails with InterceptionMissing; cni-check says the winning file lacks it', async () => {
    await node.writeConfig('10-primary.conflist', withoutMesh(3));
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(95);
    expect(check.verdict.findings.map((finding) => finding.code)).toEqual(['MeshMissing']);
    expect(check.verdict.findings[0]?.message).toContain(
      'containerd loads 10-primary.conflist, whose chain [bridge, portmap] has no linkerd-cni',
    );
    const observed = await observePod(node);
    expect(observed.eth0?.startsWith(subnetOf(3).replace('.0/24', '.'))).toBe(true);
    const validate = await validatePod(node);
    expect(validate.stdout + validate.stderr).toMatch(/InterceptionMissing/);
    expect(validate.exitCode).toBe(95);
  });

  it('S4: cniVersion 1.0.0 chaining a plugin that supports only 0.3.x: containerd refuses the pod; cni-check names the plugin and its versions', async () => {
    await node.writeConfig(
      '10-primary.conflist',
      conflist('k8s-pod-network', [bridgePlugin(4), { type: 'old-mesh' }, meshPlugin()]),
    );
    const check = await cniCheck(node);
    expect(check.exitCode).toBe(95);
    expect(check.verdict.findings).toEqual([
      expect.objectContaining({
        code: 'VersionUnsupported',
        message: expect.stringContaining('plugin "old-mesh" supports CNI versions 0.3.0, 0.3.1, not 1.0.0'),
      }),
    ]);
    const observed = await observePod(node);
    expect(observed.run.exitCode).not.toBe(0);
    expect(observed.run.stderr).toMatch(/old-mesh.*incompatible CNI versions/s);
    // The same chain at 0.3.1 is what the stand-in speaks: containerd sets the pod up, cni-check agrees.
    await node.writeConfig('10-primary.conflist', withMesh(4, '0.3.1').replace('"portmap"', '"old-mesh"'));
    expect((await cniCheck(node)).exitCode).toBe(0);
    expect((await observePod(node)).run.exitCode).toBe(0);
  });

  it('S5: a partial file, then an invalid one, sorts first: containerd fails on it; cni-check says what containerd does with it', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(5));
    await node.writeConfig('00-new.conflist', withMesh(6).slice(0, 90));
    const partial = await cniCheck(node);
    expect(partial.exitCode).toBe(95);
    expect(partial.verdict.findings[0]).toMatchObject({
      code: 'PartialFile',
      file: '00-new.conflist',
      message: expect.stringContaining('containerd reads it first and fails to load it'),
    });
    const observedPartial = await observePod(node);
    expect(observedPartial.run.exitCode).not.toBe(0);
    expect(observedPartial.run.stderr).toContain('00-new.conflist');
    await node.writeConfig('00-new.conflist', withMesh(6).replace('"plugins": [', '"plugins": [,'));
    const invalid = await cniCheck(node);
    expect(invalid.verdict.findings[0]).toMatchObject({
      code: 'LoadFails',
      file: '00-new.conflist',
      message: expect.stringContaining('"cni config load failed"'),
    });
    const observedInvalid = await observePod(node);
    expect(observedInvalid.run.exitCode).not.toBe(0);
    expect(observedInvalid.run.stderr).toContain('failed to load CNI config list file /etc/cni/net.d/00-new.conflist');
  });

  it('S6 (the agent part comes at merge): after a healthy audit the primary rewrites its conflist without the mesh entry: the running watch turns unhealthy, and pods are indeed unmeshed', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(7));
    const verdicts: Array<Result<CniVerdict>> = [];
    let notify: (() => void) | undefined;
    const watch = watchCniConfig(
      {
        confDir: node.confDir,
        binDirs: [node.binDir],
        runtime: 'containerd',
        meshPlugin: 'linkerd-cni',
        intervalMs: 3_600_000,
      },
      (verdict) => {
        verdicts.push(verdict);
        notify?.();
      },
    );
    const until = async (test: () => boolean): Promise<void> => {
      for (let i = 0; i < 300 && !test(); i++)
        await new Promise<void>((resolve) => ((notify = resolve), setTimeout(resolve, 100)));
    };
    try {
      await until(() => verdicts.length >= 1);
      expect(verdicts[0]?.ok && verdicts[0].value.healthy).toBe(true);
      await node.writeConfig('10-primary.conflist', withoutMesh(7));
      await until(() => verdicts.some((verdict) => verdict.ok && !verdict.value.healthy));
      const last = verdicts.at(-1);
      expect(last?.ok && last.value.findings.map((finding) => finding.code)).toEqual(['MeshMissing']);
    } finally {
      watch.close();
    }
    const validate = await validatePod(node);
    expect(validate.stdout + validate.stderr).toMatch(/InterceptionMissing/);
  });
});
