import type { AgentApi } from './agent-api.js';
import { nodeEvent, podEvent, type AgentEvent } from './agent-events.js';
import type { AgentMetrics } from './agent-metrics.js';
import type { AgentClock, AgentLog } from './agent-settings.js';
import type { ApiWriter } from './api-writer.js';
import type { Blocked } from './blocked.js';
import type { PodView } from './pod-view.js';

/** An Event is posted this many times at most before it is given up and logged. */
const EVENT_ATTEMPTS = 4;

export interface EventPosterPorts {
  readonly writer: Pick<ApiWriter, 'write'>;
  readonly api: Pick<AgentApi, 'createEvent'>;
  readonly metrics: Pick<AgentMetrics, 'action'>;
  readonly log: Pick<AgentLog, 'info' | 'error'>;
  readonly clock: AgentClock;
}

/** What a pod's Event says: the decision's reason and note. */
export interface PodEventText {
  readonly event: string;
  readonly note: string;
}

/**
 * The agent's account of its decisions, as Events: each is a rate-limited write, retried a few
 * times before it is given up and logged. Posting never rejects (API failures are Results).
 */
export class EventPoster {
  private sequence = 0;

  constructor(
    /** The node's name: a node Event's object and every Event's host. */
    private readonly nodeName: string,
    private readonly container: string,
    private readonly ports: EventPosterPorts,
  ) {}

  /** The wall time an Event carries (the agent's clock when it has no wall clock). */
  wall(): Date {
    return this.ports.clock.wall?.() ?? new Date(this.ports.clock.now());
  }

  /**
   * The agent's run memory is this process's; the Event's name (from the pod's uid and `key`) is
   * the memory that survives a restart: an Event already on the pod answers 409 and nothing is added.
   */
  async postPod(view: PodView, blocked: Blocked, decision: PodEventText, key: string): Promise<void> {
    const report = { reason: decision.event, note: decision.note, validatorMessage: blocked.message, key };
    await this.post(podEvent(view, report, this.container, this.nodeName, this.wall()));
  }

  /** As the kubelet does, the node's name is the Event's uid: `kubectl describe node` looks for exactly that. */
  async postNode(reason: string, message: string, type: 'Warning' | 'Normal'): Promise<void> {
    await this.post(nodeEvent(this.nodeName, this.nodeName, reason, message, type, this.wall(), this.sequence++));
  }

  async post(event: AgentEvent): Promise<void> {
    const { writer, api, metrics, log } = this.ports;
    for (let attempt = 0; attempt < EVENT_ATTEMPTS; attempt++) {
      const outcome = await writer.write('event', () => api.createEvent(event));
      if (outcome === 'exists') {
        metrics.action('event', 'exists');
        log.info({ object: event.involvedObject.name, reason: event.reason }, 'already reported: its Event is there');
        return;
      }
      if (outcome) {
        metrics.action('event', 'posted');
        return;
      }
    }
    metrics.action('event', 'error');
    log.error(
      { object: event.involvedObject.name, reason: event.reason },
      `Event not posted after ${EVENT_ATTEMPTS} attempts`,
    );
  }
}
