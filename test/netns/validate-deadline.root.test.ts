import { execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, verdictLine, usePods, type InterlockRun, type PodNamespace } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);

// Far beyond any verdict (timeout 4 s): a validator still running then is hung, and is killed so
// that the test reports it instead of waiting for vitest's own timeout.
const HUNG_AFTER_MS = 30_000;

/**
 * A log pipe that nobody reads for `stallMs`, then is drained: what a starved container runtime
 * gives a container. The validator's first log line blocks, so its first timer is armed seconds
 * after it started, as on a node where 110 pods boot on two cores.
 */
function stalledStdout(ns: PodNamespace, stallMs: number): { fd: number; drainAfterStall: () => () => void } {
  const fifo = join(ns.tmp, 'stdout');
  execFileSync('mkfifo', ['-m', '0666', fifo]);
  const filler = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  const chunk = Buffer.alloc(4096, 0x2e);
  for (;;) {
    try {
      writeSync(filler, chunk);
    } catch {
      break;
    }
  }
  // A blocking descriptor of the same full pipe: the validator's writes wait for a reader.
  const fd = openSync(fifo, constants.O_RDWR);
  return {
    fd,
    drainAfterStall: () => {
      const buffer = Buffer.alloc(65536);
      const drain = (): void => {
        try {
          while (readSync(filler, buffer) > 0);
        } catch {
          // EAGAIN: drained for now.
        }
      };
      let interval: NodeJS.Timeout | undefined;
      const start = setTimeout(() => {
        interval = setInterval(drain, 20);
      }, stallMs);
      return () => {
        clearTimeout(start);
        clearInterval(interval);
        drain();
        closeSync(filler);
      };
    },
  };
}

async function runBounded(child: ChildProcess, terminationLog: string): Promise<InterlockRun & { hung: boolean }> {
  let hung = false;
  const guard = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, HUNG_AFTER_MS);
  const run = await collect(child, terminationLog);
  clearTimeout(guard);
  return { ...run, hung };
}

describe('the verdict arrives under starvation (the start-up snapshot, what ships)', () => {
  it('an unmeshed pod whose validator starts 6 s late still fails by its deadline, not hangs', async () => {
    const ns = pod({ sink: 'drop' });
    const stdout = stalledStdout(ns, 6000);
    const child = ns.spawnInterlock(
      ['validate', '--mesh', 'linkerd', '--timeout', '4s', '--termination-log', ns.terminationLog],
      { stdout: stdout.fd },
    );
    closeSync(stdout.fd);
    const stop = stdout.drainAfterStall();
    const run = await runBounded(child, ns.terminationLog);
    stop();
    expect(run.hung, 'the validator never decided').toBe(false);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^(InterceptionMissing|ValidationTimeout): /);
  });

  it('a pod without a network whose validator starts 6 s late fails, never exits 0', async () => {
    const ns = pod({ addresses: false });
    const stdout = stalledStdout(ns, 6000);
    const child = ns.spawnInterlock(
      ['validate', '--mesh', 'linkerd', '--timeout', '4s', '--termination-log', ns.terminationLog],
      { stdout: stdout.fd },
    );
    closeSync(stdout.fd);
    const stop = stdout.drainAfterStall();
    const run = await runBounded(child, ns.terminationLog);
    stop();
    expect(run.hung, 'the validator never decided').toBe(false);
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^(PodNetworkMissing|ValidationTimeout): /);
  });
});
