import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCheck } from '../../../../src/cli/commands/check/run.js';
import type { Clock } from '../../../../src/probe/clock.js';
import { writeKubeconfig } from '../../../harness/kube-api/kubeconfig.js';
import { startKubeApi, type KubeApi } from '../../../harness/kube-api/server.js';
import type { KubeObject } from '../../../harness/kube-api/types.js';
import { REPO_ROOT } from '../../../harness/pod-namespace.js';

/**
 * `check --wait`: the checks re-run on an injected clock (no test sleeps for real) against the API
 * stand-in, whose state a "controller" changes between two runs: the agent's namespace starts
 * enforcing restricted (a failing preflight check) and is relabelled while the check waits.
 */
const captured = JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/kube/data-plane/namespaces.json'), 'utf8')) as {
  items: KubeObject[];
};
const agentNamespace = (enforce: string) =>
  ({
    metadata: {
      name: 'interlock-system',
      labels: { 'kubernetes.io/metadata.name': 'interlock-system', 'pod-security.kubernetes.io/enforce': enforce },
    },
  }) as KubeObject;

let api: KubeApi;
let dir: string;
let kubeconfig: string;

/** A clock that moves only when the check sleeps; `onSleep` plays the cluster changing meanwhile. */
function fakeClock(onSleep: (count: number) => void = () => undefined) {
  let now = 1_000_000;
  const slept: number[] = [];
  const clock: Clock = {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
      slept.push(ms);
      onSleep(slept.length);
    },
  };
  return { clock, slept };
}

async function waitCheck(wait: string, clock: Clock, stop?: AbortController) {
  const progress: string[] = [];
  const outcome = await runCheck(['--pre', '--wait', wait, '-o', 'json'], { KUBECONFIG: kubeconfig }, undefined, {
    clock,
    progress: (line) => progress.push(line),
    ...(stop ? { stopSignal: () => stop.signal } : {}),
  });
  return { ...outcome, progress };
}

beforeAll(async () => {
  api = await startKubeApi();
  dir = mkdtempSync(join(tmpdir(), `interlock-check-wait-${process.pid}-`));
  kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  for (const namespace of captured.items) api.store.put('namespaces', namespace);
});
afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  api.store.put('namespaces', agentNamespace('restricted'));
});

describe('interlock check --wait', () => {
  it('re-runs every 2s until the checks pass, saying each time what still fails', async () => {
    const { clock, slept } = fakeClock((count) => {
      if (count === 2) api.store.put('namespaces', agentNamespace('privileged'));
    });
    const { exitCode, progress, stdout } = await waitCheck('1m', clock);
    expect(exitCode).toBe(0);
    expect(slept).toEqual([2000, 2000]);
    expect(progress).toHaveLength(2);
    expect(progress[0]).toMatch(
      /^waiting: 1 failing \(preflight\.pod-security\.node-agent: Namespace interlock-system enforces PodSecurity restricted.*\); again in 2s, 1m left$/,
    );
    expect(progress[1]).toMatch(/58s left$/);
    expect(stdout).toContain('"failed": 0');
  });

  it('gives up when the duration ends, sleeping no further than it, and prints the last run', async () => {
    const { clock, slept } = fakeClock();
    const { exitCode, progress, stdout } = await waitCheck('5s', clock);
    expect(exitCode).toBe(69);
    expect(slept).toEqual([2000, 2000, 1000]);
    expect(progress).toHaveLength(3);
    expect(stdout).toMatch(/"id": "preflight.pod-security.node-agent",\s+"status": "fail"/);
  });

  it('stops waiting on SIGINT/SIGTERM (the stop signal) and prints the run it has', async () => {
    const stop = new AbortController();
    const { clock, slept } = fakeClock(() => stop.abort());
    const { exitCode } = await waitCheck('1h', clock, stop);
    expect(exitCode).toBe(69);
    expect(slept).toEqual([2000]);
  });

  it('runs once, sleeping never, when the checks pass at once', async () => {
    api.store.put('namespaces', agentNamespace('privileged'));
    const { clock, slept } = fakeClock();
    const { exitCode, progress } = await waitCheck('10m', clock);
    expect(exitCode).toBe(0);
    expect(slept).toEqual([]);
    expect(progress).toEqual([]);
  });

  it('refuses a duration under a second or over an hour', async () => {
    for (const wait of ['0s', '500ms', '2h']) {
      const outcome = await runCheck(['--wait', wait], { KUBECONFIG: kubeconfig });
      expect(outcome.exitCode, wait).toBe(64);
      expect(outcome.stderr).toMatch(/--wait.*expected a duration from 1s to 1h/);
    }
  });
});
