import type { AgentClock } from './agent-settings.js';

/** The agent's work not awaited where it started (Events, taints): stop waits for it, up to a deadline. */
export class InFlight {
  private readonly work = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.work.add(work);
    void work.finally(() => this.work.delete(work));
    return work;
  }

  /** True once everything tracked settled, false when `deadlineMs` passed first. */
  drain(clock: AgentClock, deadlineMs: number): Promise<boolean> {
    const drained = Promise.allSettled([...this.work]).then(() => true);
    const timeout = new Promise<boolean>((resolve) => clock.later(() => resolve(false), deadlineMs));
    return Promise.race([drained, timeout]);
  }
}
