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
  removeBridges,
  startCniNode,
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

// S1 and S3-S5 run on the kubelet's path in e2e/cri/cni-audit.test.ts (containerd's CRI plugin).
// Here, through `ctr run --cni`, what that path cannot show: a runtime that starts a pod with no
// address (S2: the CRI plugin refuses such a sandbox), and the audit's running watch (S6).
describe('CNI scenarios with ctr run --cni', () => {
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

  it('S6: after a healthy audit the primary rewrites its conflist without the mesh entry: the running watch turns unhealthy, and pods are indeed unmeshed', async () => {
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
