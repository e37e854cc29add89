import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { IMAGE, kubectl, STATE, waitFor } from './cluster.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/cluster.sh', import.meta.url));
const cluster = (command: string): string =>
  execFileSync('bash', [SCRIPT, command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });

/** Processes whose mount namespace is the cluster's (the components, containerd and its shims). */
function processesIn(mntns: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/ns/mnt`) === mntns;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const cgroupsLeft = (): string[] =>
  readdirSync('/sys/fs/cgroup').filter((hierarchy) => existsSync(`/sys/fs/cgroup/${hierarchy}/interlock-cluster`));
const netnsLeft = (): boolean => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).includes('ilk-cluster');
const vethLeft = (): boolean => execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' }).includes('ilk-cluster0');
/** The host's routes for the cluster's ranges (scripts/cluster.sh host_routes): the pod range via the node, the Service range nowhere. */
const hostRoutes = (): string[] =>
  execFileSync('ip', ['route', 'show'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => /10\.23[23]\./.test(line));

// Brought back up for whatever runs after this file.
afterAll(() => {
  cluster('up');
}, 600_000);

describe('npm run cluster:down', () => {
  it('after the supervisor was killed outright, a second start reuses the cluster, and down leaves no process, cgroup, namespace, link or file', async () => {
    const mntns = readFileSync(`${STATE}/mntns`, 'utf8').trim();
    const supervisor = Number(readFileSync(`${STATE}/supervisor.pid`, 'utf8'));
    // A pod running, so that containers, shims and the pods' cgroups exist.
    await kubectl([
      'run',
      'sleeper',
      '--image',
      IMAGE,
      '--restart',
      'Never',
      '--command',
      '--',
      'node',
      '-e',
      'setInterval(() => {}, 1 << 30)',
    ]);
    await waitFor(
      'the pod to run',
      async () => (await kubectl(['get', 'pod', 'sleeper', '-o', 'jsonpath={.status.phase}'])) === 'Running',
      120_000,
    );
    expect(cgroupsLeft().length).toBeGreaterThan(0);
    expect(processesIn(mntns).length).toBeGreaterThan(5);
    process.kill(supervisor, 'SIGKILL');

    expect(cluster('up').trim().split('\n').at(-1)).toBe(`KUBECONFIG=${STATE}/admin.kubeconfig`);
    // Nothing for the cluster's ranges takes the host's default route off the machine.
    expect(hostRoutes().sort()).toEqual([
      expect.stringMatching(/^10\.232\.0\.0\/24 via 10\.231\.0\.2 dev ilk-cluster0/),
      expect.stringMatching(/^unreachable 10\.233\.0\.0\/24/),
    ]);
    expect(processesIn(mntns).length).toBeGreaterThan(5);

    cluster('down');
    expect(processesIn(mntns)).toEqual([]);
    expect(cgroupsLeft()).toEqual([]);
    expect(netnsLeft()).toBe(false);
    expect(vethLeft()).toBe(false);
    expect(hostRoutes()).toEqual([]);
    expect(existsSync(STATE)).toBe(false);
  });
});
