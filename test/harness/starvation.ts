import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/**
 * Busy loops, each in its own session (setsid), as a container runtime starts each container:
 * with autogroup scheduling a session is one scheduling entity, so loops sharing the test's
 * session would take one loop's worth of CPU from the process under test, not the machine. Each
 * loop ends itself on the monotonic clock, so a killed test leaves nothing spinning.
 */
export function startBusyLoops(count = 8 * availableParallelism(), forMs = 60_000): { stop: () => void } {
  const loop = `const end = performance.now() + ${forMs}; while (performance.now() < end);`;
  const loops: ChildProcess[] = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', loop], { detached: true, stdio: 'ignore' }),
  );
  return {
    stop: () => {
      for (const child of loops) {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Ended by itself.
        }
      }
    },
  };
}

/**
 * libfaketime stepping only the wall clock (CLOCK_REALTIME) of one process tree, as NTP's first
 * sync does on a booting node; the monotonic clock runs on. `step('-3600')` while it runs.
 */
export function steppedClock(): { env: Record<string, string>; step: (offset: string) => void; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-clock-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'faketime');
  writeFileSync(file, '+0\n');
  chmodSync(file, 0o666);
  return {
    env: {
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
      FAKETIME_NO_CACHE: '1',
      FAKETIME_TIMESTAMP_FILE: file,
    },
    step: (offset) => writeFileSync(file, `${offset}\n`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Node flags for a full garbage collection every 10 ms for the whole run: a signal, listener or
 * timer reachable only weakly is collected mid-wait, and its abort or wake-up lost. For the npm
 * bin only (a start-up snapshot refuses V8 flags it was not built with).
 */
export function gcStormFlags(): { flags: string[]; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-gc-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'gc-storm.cjs');
  writeFileSync(file, 'setInterval(() => globalThis.gc(), 10).unref();\n');
  chmodSync(file, 0o644);
  return { flags: ['--expose-gc', '--require', file], remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The child's exit code and signal, whenever it comes (it may already have exited). */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * Resolves when `seen()` holds, or rejects once the child has exited without it (never waits
 * forever on a log line of a process that is gone), or after `limitMs`.
 */
export async function untilOrExit(
  child: ChildProcess,
  what: string,
  seen: () => boolean,
  limitMs = 60_000,
): Promise<void> {
  const started = performance.now();
  for (;;) {
    if (seen()) return;
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the process exited (${child.exitCode ?? child.signalCode}) before ${what}`);
    if (performance.now() - started > limitMs) throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
