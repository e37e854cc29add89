import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../../src/cli/commands/manifest/run.js';
import { nodeConfigOf } from '../../../src/cli/commands/node/config.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
async function printed(args: string[]): Promise<Doc[]> {
  const outcome = await runManifest(['--node-agent', '--mesh', 'linkerd', ...args], {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc);
}
const kind = (docs: Doc[], name: string) => docs.find((doc) => doc.kind === name)!;

describe('manifest --node-agent --recheck-interval: the privileged variant, stated', () => {
  it('uid 0 with exactly SYS_ADMIN, NET_ADMIN, NET_RAW and SETPCAP, the socket and /run/netns read-only, namespaces get', async () => {
    const docs = await printed(['--recheck-interval', '1m', '--cri-endpoint', 'unix:///var/run/crio/crio.sock']);
    const pod = kind(docs, 'DaemonSet').spec.template.spec;
    const container = pod.containers[0];
    expect(container.securityContext).toMatchObject({
      runAsUser: 0,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['SYS_ADMIN', 'NET_ADMIN', 'NET_RAW', 'SETPCAP'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.hostPID).toBeUndefined();
    expect(container.volumeMounts.every((mount: Doc) => mount.readOnly === true)).toBe(true);
    expect(pod.volumes).toEqual([
      { name: 'cri-socket', hostPath: { path: '/var/run/crio/crio.sock', type: 'Socket' } },
      { name: 'netns', hostPath: { path: '/run/netns', type: 'Directory' } },
    ]);
    expect(container.args).toEqual(expect.arrayContaining(['--recheck-interval', '1m']));
    expect(kind(docs, 'ClusterRole').rules).toContainEqual({
      apiGroups: [''],
      resources: ['namespaces'],
      verbs: ['get'],
    });
    expect(kind(docs, 'Namespace').metadata.labels['pod-security.kubernetes.io/enforce']).toBe('privileged');
  });

  it("mounts --netns-dir where the runtime mounts pods' namespaces (containerd's netns_mounts_under_state_dir), at the same path", async () => {
    const dir = '/var/lib/interlock-cluster/containerd-state/io.containerd.grpc.v1.cri/netns';
    const docs = await printed(['--recheck-interval', '1m', '--netns-dir', dir]);
    const pod = kind(docs, 'DaemonSet').spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'netns', hostPath: { path: dir, type: 'Directory' } });
    expect(pod.containers[0].volumeMounts.filter((mount: Doc) => mount.name === 'netns')).toEqual([
      { name: 'netns', mountPath: dir, readOnly: true, mountPropagation: 'HostToContainer' },
    ]);
    expect(pod.containers[0].args).toEqual(expect.arrayContaining(['--netns-dir', dir]));
    for (const bad of ['run/netns', '/run/netns/', '/run/../etc', '/run/net ns'])
      expect(
        (await runManifest(['--node-agent', '--mesh', 'linkerd', '--recheck-interval', '1m', '--netns-dir', bad], {}))
          .stderr,
      ).toMatch(/--netns-dir/);
  });

  it('without the flag the agent stays unprivileged, with no runtime mount and no namespace read', async () => {
    const docs = await printed([]);
    const container = kind(docs, 'DaemonSet').spec.template.spec.containers[0];
    expect(container.securityContext).toMatchObject({ runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(container.securityContext.capabilities.add).toBeUndefined();
    expect(container.volumeMounts).toBeUndefined();
    expect(JSON.stringify(kind(docs, 'ClusterRole').rules)).not.toContain('namespaces');
  });

  it('refuses a CRI endpoint that is not a unix socket path, naming the flag', () => {
    expect(nodeConfigOf(['--node-name', 'n', '--recheck-interval', '1m', '--cri-endpoint', 'tcp://x:1'], {})).toMatch(
      /--cri-endpoint/,
    );
    expect(nodeConfigOf(['--node-name', 'n', '--recheck-interval', '10ms'], {})).toMatch(/--recheck-interval/);
    const config = nodeConfigOf(['--node-name', 'n', '--recheck-interval', '1m'], {});
    expect(typeof config !== 'string' && config.recheck).toMatchObject({
      intervalMs: 60_000,
      socketPath: '/run/containerd/containerd.sock',
      action: 'report',
    });
    const off = nodeConfigOf(['--node-name', 'n'], {});
    expect(typeof off !== 'string' && off.recheck).toBeUndefined();
  });
});
