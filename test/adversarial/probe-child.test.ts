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

function capsOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8').match(/^CapEff:\s+([0-9a-f]+)/m)?.[1];
  } catch {
    return undefined;
  }
}

describe('the probe child as another uid, with a silent sink (every attempt times out)', () => {
  // As uid 1337 the child keeps the validator's ambient capabilities (a non-root to non-root
  // setuid keeps them; Node has no capset), so only the root validator's child is checked for none.
  for (const [uid, childUid] of [
    [1337, 65534],
    [0, 1337],
  ] as const)
    it(`as uid ${uid}: one child at a time, none left behind${uid === 0 ? ', the child holds no capability' : ''}`, async () => {
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
      const childCaps = new Set<string>();
      let exited = false;
      void running.then(() => {
        exited = true;
      });
      while (!exited) {
        const children = pidsIn(ns).filter((pid) => uidOf(pid) === childUid);
        maxChildren = Math.max(maxChildren, children.length);
        for (const pid of children) {
          const caps = capsOf(pid);
          if (caps) childCaps.add(caps);
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
      if (uid === 0) expect([...childCaps], 'the child holds no capability').toEqual(['0000000000000000']);
    }, 30_000);
});
