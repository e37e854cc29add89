import type { ApiResult, CreateOutcome, DeleteOutcome, PodRef } from '../../src/kube/pods-api.js';
import type { AgentApi } from '../../src/node-agent/agent-api.js';
import type { AgentEvent } from '../../src/node-agent/agent-events.js';
import type { AgentMetrics } from '../../src/node-agent/agent-metrics.js';
import type { AgentClock } from '../../src/node-agent/agent-settings.js';

/** A clock the test moves by hand: timers fire only when `advance` passes them. */
export class ManualClock implements AgentClock {
  time = 1_000_000;
  private timers: { at: number; fn: () => void }[] = [];
  now(): number {
    return this.time;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(resolve, ms));
  }
  later(fn: () => void, ms: number): () => void {
    const timer = { at: this.time + ms, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((other) => other !== timer);
    };
  }
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      const due = this.timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = Math.max(this.time, due.at);
      due.fn();
    }
    this.time = end;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export class FakeApi implements AgentApi {
  deleted: string[] = [];
  events: AgentEvent[] = [];
  taints: boolean[] = [];
  async deletePod(ref: PodRef): Promise<ApiResult<DeleteOutcome>> {
    this.deleted.push(ref.name);
    return { ok: true, value: 'deleted' };
  }
  async labelPod(): Promise<ApiResult<DeleteOutcome>> {
    return { ok: true, value: 'deleted' };
  }
  async createEvent(event: AgentEvent): Promise<ApiResult<CreateOutcome>> {
    this.events.push(event);
    return { ok: true, value: 'created' };
  }
  async setTaint(present: boolean): Promise<ApiResult<'changed' | 'unchanged'>> {
    this.taints.push(present);
    return { ok: true, value: 'changed' };
  }
}

export const quiet: AgentMetrics = {
  podsWatched() {},
  blocked() {},
  action() {},
  breakerOpen() {},
  watchRestart() {},
  apiError() {},
  queueDepth() {},
  cniAudit() {},
};
export const log = { info() {}, warn() {}, error() {} };
