import type { ApiResult, CreateOutcome, DeleteOutcome, PodRef } from '../../src/kube/pods-api.js';
import type { AgentApi } from '../../src/node-agent/agent-api.js';
import type { AgentEvent } from '../../src/node-agent/agent-events.js';
import type { AgentMetrics } from '../../src/node-agent/agent-metrics.js';
import type { AgentClock, AgentSettings } from '../../src/node-agent/agent-settings.js';
import { NodeAgent } from '../../src/node-agent/agent.js';
import { shippedValidator } from '../../src/cli/commands/node/shipped-validator.js';

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

class FakeApi implements AgentApi {
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

const quiet: AgentMetrics = {
  podsWatched() {},
  blocked() {},
  action() {},
  breakerOpen() {},
  watchRestart() {},
  apiError() {},
  queueDepth() {},
  cniAudit() {},
};
const log = { info() {}, warn() {}, error() {} };

/** A NodeAgent on the manual clock and the fake API, Linkerd's settings unless `over` says otherwise. */
export function fakeAgent(over: Partial<AgentSettings> = {}, wallNow?: () => number) {
  const settings: AgentSettings = {
    node: 'node-a',
    container: 'linkerd-network-validator',
    failureExitCode: 95,
    action: 'delete',
    taint: true,
    backoff: { baseMs: 1000, maxMs: 60_000, maxRecreations: 3, windowMs: 600_000 },
    breaker: { threshold: 5, windowMs: 60_000, minNamespaces: 1 },
    retry: { baseMs: 500, maxMs: 30_000 },
    queueCapacity: 1024,
    writesPerSecond: 1000,
    writeBurst: 1000,
    trustedImages: [],
    shipped: shippedValidator('linkerd'),
    ...over,
  };
  const clock = new ManualClock();
  const api = new FakeApi();
  const agent = new NodeAgent(settings, {
    api,
    metrics: quiet,
    log,
    clock,
    random: () => 0.5,
    ...(wallNow ? { wallNow } : {}),
  });
  void agent.run();
  return { agent, api, clock };
}
