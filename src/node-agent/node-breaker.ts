import type { AgentApi } from './agent-api.js';
import type { AgentMetrics } from './agent-metrics.js';
import type { AgentLog } from './agent-settings.js';
import type { ApiWriter } from './api-writer.js';
import { CLOSED_BREAKER, type BreakerPolicy, type BreakerState, type BreakerStep } from './breaker.js';
import { breakerClosedEvent, breakerOpenedEvent, openedWhy, type NodeEventText } from './breaker-text.js';

export interface NodeBreakerPorts {
  readonly writer: Pick<ApiWriter, 'write'>;
  readonly api: Pick<AgentApi, 'setTaint'>;
  readonly metrics: Pick<AgentMetrics, 'breakerOpen'>;
  readonly log: Pick<AgentLog, 'info' | 'error'>;
  postNodeEvent(text: NodeEventText): Promise<void>;
  /** The node gate hears of every transition. */
  gate?(open: boolean, why: string): void;
  /** Work not awaited where it starts: stop() drains it. */
  track(work: Promise<void>): Promise<void>;
  /** After it closes: every pod still blocked is offered again. */
  rescan(): void;
}

export interface NodeBreakerSettings {
  readonly node: string;
  readonly taint: boolean;
  readonly breaker: BreakerPolicy;
}

/**
 * The breaker's edges: it keeps the pure state (breaker.ts) and carries out each transition: the
 * metric, the log line, the gate, the node Event and, with `taint`, the node's taint.
 */
export class NodeBreaker {
  private state: BreakerState = CLOSED_BREAKER;

  constructor(
    private readonly settings: NodeBreakerSettings,
    private readonly ports: NodeBreakerPorts,
  ) {}

  get current(): BreakerState {
    return this.state;
  }

  get open(): boolean {
    return this.state.open;
  }

  /** Takes the next state; a transition is carried out in the background. */
  step(next: BreakerStep, cause: string): void {
    this.state = next.state;
    if (!next.transition) return;
    this.ports.metrics.breakerOpen(next.transition === 'opened');
    // Not awaited: write and postNodeEvent do not reject, and stop() drains the tracked work.
    void this.ports.track(next.transition === 'opened' ? this.opened(cause) : this.closed());
  }

  private async opened(cause: string): Promise<void> {
    const { node, taint, breaker } = this.settings;
    const why = openedWhy(cause, breaker);
    this.ports.log.error({ node }, `circuit breaker open: ${why}`);
    this.ports.gate?.(true, why);
    await this.ports.postNodeEvent(breakerOpenedEvent(node, why, taint));
    if (taint) await this.ports.writer.write('taint', () => this.ports.api.setTaint(true));
  }

  private async closed(): Promise<void> {
    const { node, taint, breaker } = this.settings;
    this.ports.log.info({ node }, 'circuit breaker closed');
    this.ports.gate?.(false, '');
    if (taint) await this.ports.writer.write('untaint', () => this.ports.api.setTaint(false));
    await this.ports.postNodeEvent(breakerClosedEvent(node, breaker));
    this.ports.rescan();
  }
}
