import { watch, type FSWatcher } from 'node:fs';
import type { Result } from '../reason/result.js';
import type { CniVerdict } from './audit-cni.js';
import { runCniAudit, type CniAuditOptions } from './run-cni-audit.js';

export interface CniWatchOptions extends CniAuditOptions {
  /** The periodic re-check, which also catches what no event reports (binaries, missed events). */
  readonly intervalMs?: number;
  /** Events come in bursts (a write is truncate + write + close); one audit per burst. */
  readonly debounceMs?: number;
}

export type CniVerdictListener = (verdict: Result<CniVerdict>, previous: Result<CniVerdict> | undefined) => void;

/**
 * Watches the CNI configuration directory: an audit on file-system events and every
 * `intervalMs`, and `onVerdict` called with the first verdict and then whenever it changes
 * (health, the file the runtime loads, or any finding). Audits never overlap.
 */
export function watchCniConfig(options: CniWatchOptions, onVerdict: CniVerdictListener): { close(): void } {
  let last: Result<CniVerdict> | undefined;
  let lastKey: string | undefined;
  let running = false;
  let again = false;
  let closed = false;
  let debounce: NodeJS.Timeout | undefined;
  // Closing ends an audit under way: its plugins' process groups are killed, not orphaned.
  const stop = new AbortController();

  const audit = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    do {
      again = false;
      const verdict = await runCniAudit({ ...options, signal: stop.signal });
      const key = keyOf(verdict);
      if (!closed && key !== lastKey) {
        const previous = last;
        last = verdict;
        lastKey = key;
        onVerdict(verdict, previous);
      }
    } while (again && !closed);
    running = false;
  };
  const schedule = (): void => {
    if (closed) return;
    clearTimeout(debounce);
    debounce = setTimeout(
      () =>
        void audit().catch(() => {
          running = false;
        }),
      options.debounceMs ?? 100,
    );
  };

  const events = directoryEvents(options.confDir, schedule);
  const timer = setInterval(() => {
    events.ensure();
    schedule();
  }, options.intervalMs ?? 30_000);
  timer.unref();
  void audit().catch(() => {
    running = false;
  });
  return {
    close(): void {
      closed = true;
      stop.abort();
      clearTimeout(debounce);
      clearInterval(timer);
      events.close();
    },
  };
}

/**
 * File-system events of a directory. It may not exist yet (the CNI creates it) or may vanish:
 * `ensure` (called on every periodic tick) starts watching when it is not.
 */
function directoryEvents(dir: string, onEvent: () => void): { ensure(): void; close(): void } {
  let watcher: FSWatcher | undefined;
  let closed = false;
  const ensure = (): void => {
    if (watcher || closed) return;
    try {
      watcher = watch(dir, { persistent: false }, onEvent);
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    }
  };
  ensure();
  return {
    ensure,
    close(): void {
      closed = true;
      watcher?.close();
    },
  };
}

/** What makes two verdicts "the same" for the listener: health, winner and findings. */
function keyOf(verdict: Result<CniVerdict>): string {
  if (!verdict.ok) return `error:${verdict.error.message}`;
  const { healthy, loads, findings } = verdict.value;
  return JSON.stringify([healthy, loads?.file, loads?.chain, findings.map((finding) => finding.message)]);
}
