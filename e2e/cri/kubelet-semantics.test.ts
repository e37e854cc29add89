import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CriNode } from './cri-node.js';
import { ManualClock } from './kubelet/backoff.js';
import type { ContainerStatus } from './kubelet/container-status.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec } from './kubelet/pod-spec.js';
import { MemoryPublisher } from './kubelet/publisher.js';
import { bridge, conflist, podOf, portmap } from './scenario.js';
import { startNode } from './suite-node.js';

// The harness itself, on the real CRI: what the kubelet does with init containers, back-off,
// termination messages and the security context, checked against what the runtime really did.
let node: CriNode;
beforeAll(async () => {
  node = await startNode();
  await node.writeConfig('10-primary.conflist', conflist([bridge(node, 20), portmap]));
  await node.waitCniLoaded('ilkcri20');
}, 300_000);
afterAll(async () => {
  await node?.stop();
});

const script = (name: string, code: string, extra: Partial<ContainerSpec> = {}): ContainerSpec => ({
  name,
  image: 'busybox-like',
  command: ['node', '-e', code],
  securityContext: { runAsUser: 65534, runAsGroup: 65534 },
  ...extra,
});
const stateOf = (pod: PodRun, name: string): ContainerStatus => pod.statuses.get(name) as ContainerStatus;

describe('the kubelet-shaped harness on containerd CRI', () => {
  it('runs init containers in order, each only after the previous exited 0, and the app after all', async () => {
    const kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher() });
    const pod = kubelet.start(
      podOf('order', {
        initContainers: [script('first', 'setTimeout(() => {}, 300)'), script('second', 'process.exit(0)')],
      }),
    );
    try {
      expect(await pod.outcome).toMatchObject({ kind: 'running' });
      const [first, second] = pod.attempts;
      expect(pod.attempts.map((attempt) => attempt.name)).toEqual(['first', 'second']);
      // The runtime's own clocks: the second started after the first had finished.
      expect(second!.startedAtNs).toBeGreaterThan(first!.finishedAtNs);
      expect(pod.statusJson()).toMatchObject({
        phase: 'Running',
        conditions: expect.arrayContaining([{ type: 'Initialized', status: 'True' }]),
      });
    } finally {
      await pod.stop();
    }
  });

  it('restarts a failing init container with back-off 10 s doubling to 5 min, never starting what follows', async () => {
    const clock = new ManualClock();
    const kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher(), clock });
    const failing = script('gate', 'console.log("gate says no"); process.exit(3)', {
      terminationMessagePolicy: 'FallbackToLogsOnError',
    });
    const pod = kubelet.start(podOf('backoff', { initContainers: [failing, script('after', 'process.exit(0)')] }));
    try {
      await clock.sleepsStarted(1);
      const status = stateOf(pod, 'gate');
      expect(status.state).toEqual({
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off 10s restarting failed container=gate pod=${pod.pod.metadata.name}_default(${pod.pod.metadata.uid})`,
        },
      });
      expect(status.lastState).toMatchObject({
        terminated: { exitCode: 3, reason: 'Error', message: 'gate says no\n' },
      });
      for (let n = 2; n <= 7; n++) {
        clock.advance(clock.sleeps.at(-1) as number);
        await clock.sleepsStarted(n);
      }
      expect(clock.sleeps).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
      expect(stateOf(pod, 'gate').restartCount).toBe(6);
      expect(stateOf(pod, 'gate').state).toMatchObject({
        waiting: { message: expect.stringMatching(/^back-off 5m0s /) },
      });
      expect(new Set(pod.attempts.map((attempt) => attempt.name))).toEqual(new Set(['gate']));
      expect(stateOf(pod, 'app').state).toEqual({ waiting: { reason: 'PodInitializing' } });
    } finally {
      await pod.stop();
    }
    expect(await pod.outcome).toEqual({ kind: 'stopped' });
  });

  it('reads termination messages as the kubelet does: the file, its last 4 KiB, and the log only for FallbackToLogsOnError on failure', async () => {
    const kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher() });
    const write = (text: string) => `require("fs").writeFileSync("/dev/termination-log", ${JSON.stringify(text)})`;
    const pod = kubelet.start(
      podOf('messages', {
        restartPolicy: 'Never',
        initContainers: [
          script('long', write(`${'a'.repeat(1000)}${'b'.repeat(4096)}`)),
          script('quiet-pass', 'console.log("only a log")', { terminationMessagePolicy: 'FallbackToLogsOnError' }),
          script('file-wins', `${write('from the file')}; console.log("log"); process.exit(1)`, {
            terminationMessagePolicy: 'FallbackToLogsOnError',
          }),
        ],
      }),
    );
    try {
      expect(await pod.outcome).toEqual({ kind: 'failed', container: 'file-wins' });
      const message = (name: string) => pod.attempts.find((attempt) => attempt.name === name)?.message;
      expect(message('long')).toBe('b'.repeat(4096));
      expect(message('quiet-pass')).toBe('');
      expect(message('file-wins')).toBe('from the file');
      expect(pod.statusJson()['phase']).toBe('Failed');
    } finally {
      await pod.stop();
    }
    const logOnly = kubelet.start(
      podOf('log-tail', {
        restartPolicy: 'Never',
        initContainers: [
          script('noisy', 'for (let i = 0; i < 100; i++) console.log("line " + i); process.exit(2)', {
            terminationMessagePolicy: 'FallbackToLogsOnError',
          }),
        ],
      }),
    );
    try {
      await logOnly.outcome;
      const tail = logOnly.attempts[0]?.message ?? '';
      // 80 lines at most: lines 20..99.
      expect(tail.split('\n').filter(Boolean)).toEqual(Array.from({ length: 80 }, (_, i) => `line ${i + 20}`));
      const plain = kubelet.start(
        podOf('file-policy', {
          restartPolicy: 'Never',
          initContainers: [script('plain', 'console.log("x"); process.exit(2)')],
        }),
      );
      await plain.outcome;
      expect(plain.attempts[0]?.message).toBe('');
      await plain.stop();
    } finally {
      await logOnly.stop();
    }
  });

  it("applies the pod's securityContext as the kubelet sends it: uid and gid, no capabilities, no_new_privs, seccomp, masked and read-only paths", async () => {
    const kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher() });
    const probe = [
      'const fs = require("fs");',
      'const status = fs.readFileSync("/proc/self/status", "utf8").split("\\n").filter((l) => /^(Uid|Gid|CapEff|CapBnd|CapPrm|NoNewPrivs|Seccomp):/.test(l));',
      'const mounts = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\\n").map((l) => l.split(" "));',
      'const options = (point) => (mounts.find((f) => f[4] === point) || [])[5];',
      'const tries = { timerList: options("/proc/timer_list"), procSys: options("/proc/sys"), timerListBytes: fs.readFileSync("/proc/timer_list", "utf8").length,',
      '  root: (() => { try { fs.writeFileSync("/x", "y"); return "written"; } catch (e) { return e.code; } })() };',
      'fs.writeFileSync("/dev/termination-log", status.join("\\n") + "\\n" + JSON.stringify(tries));',
    ].join('\n');
    const pod = kubelet.start(
      podOf('identity', {
        restartPolicy: 'Never',
        initContainers: [
          script('identity', probe, {
            terminationMessagePolicy: 'FallbackToLogsOnError',
            securityContext: {
              runAsUser: 65534,
              runAsGroup: 65533,
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'] },
              seccompProfile: { type: 'RuntimeDefault' },
            },
          }),
        ],
      }),
    );
    try {
      await pod.outcome;
      const message = pod.attempts[0]?.message ?? '';
      expect(pod.attempts[0]?.exitCode, message).toBe(0);
      expect(message).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
      expect(message).toMatch(/^Gid:\s+65533\s+65533\s+65533\s+65533$/m);
      for (const set of ['CapEff', 'CapPrm', 'CapBnd']) expect(message).toMatch(new RegExp(`^${set}:\\s+0{16}$`, 'm'));
      expect(message).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(message).toMatch(/^Seccomp:\s+2$/m);
      expect(JSON.parse(message.split('\n').at(-1) as string)).toEqual({
        // Masked: a mount of its own there (runc binds /dev/null over it); /proc/sys read-only.
        timerList: expect.any(String),
        timerListBytes: 0,
        procSys: expect.stringMatching(/^ro,/),
        root: 'EROFS',
      });
    } finally {
      await pod.stop();
    }
  });
});
