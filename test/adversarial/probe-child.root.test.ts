import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
  // them: the child must shed them itself before it connects. A child is judged by its last sample,
  // and only a child sampled twice or more: the first sample may fall in the moment before it sheds
  // them, and a child whose attempt ends at once (the sink answered unreachable) is seen only then.
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
      const childCaps = new Map<number, string[]>();
      let exited = false;
      void running.then(() => {
        exited = true;
      });
      while (!exited) {
        const children = pidsIn(ns).filter((pid) => uidOf(pid) === childUid);
        maxChildren = Math.max(maxChildren, children.length);
        for (const pid of children) {
          const caps = capsOf(pid);
          if (caps) childCaps.set(pid, [...(childCaps.get(pid) ?? []), caps]);
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
      const judged = [...childCaps.values()].filter((samples) => samples.length > 1).map((samples) => samples.at(-1));
      expect(judged.length, 'a child sampled twice or more (its attempt waited in the sink)').toBeGreaterThan(0);
      expect(new Set(judged), 'the child holds no capability, effective or ambient').toEqual(
        new Set(['0000000000000000/0000000000000000']),
      );
    }, 30_000);
});
