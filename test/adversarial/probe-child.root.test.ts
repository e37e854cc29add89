import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, verdictLine, REPO_ROOT, usePods, type PodNamespace } from '../harness/pod-namespace.js';

// The child that connects as uid 65534 for Istio's validator (uid 1337) cannot be signalled by
// it: without CAP_KILL a kill() across uids is EPERM. It must leave by its own deadline or when
// its channel closes, and only one may live at a time.
const pod = usePods(afterEach);
const GOLDEN = readFileSync(resolve(REPO_ROOT, 'test/fixtures/corpus/istio/kube-virt-interfaces/restore.v4'), 'utf8');
const SWITCH = ['setuid', 'setgid'];
const APP_PATH_RULE = '-A ISTIO_OUTPUT -j ISTIO_REDIRECT\n';
const PROXY_PATH_RULE = /^-A ISTIO_OUTPUT -o lo ! -d 127\.0\.0\.1\/32 .* -j ISTIO_IN_REDIRECT\n/gm;
const withoutProxyPath = (): string =>
  `${GOLDEN.replace(PROXY_PATH_RULE, '')}*filter\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -o lo -m owner --uid-owner 1337 -j DROP\nCOMMIT\n`;

function pidsIn(ns: PodNamespace): number[] {
  return execFileSync('ip', ['netns', 'pids', ns.pod], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
}

function uidOf(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m);
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** How many sockets the process holds: its IPC channel is one, a probe connection is another. */
function socketsOf(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
      } catch {
        return false;
      }
    }).length;
  } catch {
    return undefined;
  }
}

/** The effective and ambient sets, `CapEff/CapAmb`, while the process lives. */
function capsOf(pid: number): string | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const set = (name: string): string | undefined => new RegExp(`^${name}:\\s+([0-9a-f]+)`, 'm').exec(status)?.[1];
    const eff = set('CapEff');
    const amb = set('CapAmb');
    return eff === undefined || amb === undefined ? undefined : `${eff}/${amb}`;
  } catch {
    return undefined;
  }
}

describe('the probe child as another uid, with a silent sink (every attempt times out)', () => {
  // As uid 1337 the validator's capabilities are ambient, and a non-root to non-root setuid keeps
  // them: the child must shed them itself before it connects. So a child is judged at the moments it
  // holds its probe socket (a second socket beside its IPC channel): a child still starting, or one
  // ended by the validator's deadline before it connected, rightly holds them and no connection.
  for (const [uid, childUid] of [
    [1337, 65534],
    [0, 1337],
  ] as const)
    it(`as uid ${uid}: one child at a time, none left behind, the child holds no capability`, async () => {
      const ns = pod({ sink: 'drop' });
      // Only uid 1337's own path is redirected: the app path's SYNs die silently in the sink.
      // As 1337 the child probes the app path, as 0 the proxy's loopback path: each is left
      // uncaptured, its SYNs silently dropped, so every attempt of the child waits out its life.
      ns.applyRulesText(uid === 1337 ? GOLDEN.replace(APP_PATH_RULE, '') : withoutProxyPath(), 'nft');
      const child = ns.spawnInterlock(
        ['validate', '--termination-log', ns.terminationLog, '--mesh', 'istio', '--rules', 'off', '--timeout', '8s'],
        { uid, extraCaps: [...SWITCH, 'net_raw'] },
      );
      const running = collect(child, ns.terminationLog);
      let maxChildren = 0;
      const whileConnecting: string[] = [];
      let exited = false;
      void running.then(() => {
        exited = true;
      });
      while (!exited) {
        const children = pidsIn(ns).filter((pid) => uidOf(pid) === childUid);
        maxChildren = Math.max(maxChildren, children.length);
        for (const pid of children) {
          const sockets = socketsOf(pid);
          const caps = capsOf(pid);
          if (caps !== undefined && sockets !== undefined && sockets >= 2) whileConnecting.push(caps);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const run = await running;
      await new Promise((r) => setTimeout(r, 300));
      const left = pidsIn(ns);
      expect(run.exitCode, run.terminationMessage).toBe(126);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^InterceptionMissing: .*as uid 65534|^InterceptionMissing: /,
      );
      expect(maxChildren, 'probe children alive at once').toBeLessThanOrEqual(1);
      expect(maxChildren, 'a child was seen (the test observes them)').toBe(1);
      expect(left, 'processes left in the pod after the validator exited').toEqual([]);
      expect(whileConnecting.length, 'a child seen holding its probe socket (it waited in the sink)').toBeGreaterThan(
        0,
      );
      expect(new Set(whileConnecting), 'the child holds no capability, effective or ambient').toEqual(
        new Set(['0000000000000000/0000000000000000']),
      );
    }, 30_000);
});
