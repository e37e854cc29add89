import type { AgentMetrics } from './agent-metrics.js';
import type { AgentLog } from './agent-settings.js';
import { CoalescingQueue } from './coalescing-queue.js';

export interface WorkLoopPorts {
  readonly metrics: Pick<AgentMetrics, 'queueDepth'>;
  readonly log: Pick<AgentLog, 'warn'>;
}

/**
 * The agent's single worker: pod keys wait in a bounded coalescing queue and are processed one at
 * a time until `stop`. A key refused by a full queue is not lost: once the queue runs dry the
 * worker rescans (the caller offers every pod still to do).
 */
export class WorkLoop {
  private readonly queue: CoalescingQueue<true>;
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly capacity: number,
    private readonly ports: WorkLoopPorts,
  ) {
    this.queue = new CoalescingQueue(capacity);
  }

  get stopping(): boolean {
    return this.stopped;
  }

  offer(key: string): void {
    if (this.stopped) return;
    const outcome = this.queue.offer(key, true);
    if (outcome === 'full')
      this.ports.log.warn(
        { pod: key, capacity: this.capacity },
        'work queue full: the pod is picked up by a rescan once there is room',
      );
    this.ports.metrics.queueDepth(this.queue.size);
    this.wake?.();
  }

  /** Takes keys one at a time into `process`, and calls `rescan` after an overflow, until `stop`. */
  async run(process: (key: string) => Promise<void>, rescan: () => void): Promise<void> {
    while (!this.stopped) {
      const next = this.queue.take();
      this.ports.metrics.queueDepth(this.queue.size);
      if (!next) {
        if (this.queue.takeOverflow()) {
          rescan();
          continue;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      await process(next[0]);
    }
  }

  /** Takes no more work; a worker waiting for some returns. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }
}
