import type { NodeCondition, NodeState } from '../kube/node-status.js';
import type { ApiResult } from '../kube/pods-api.js';
import type { AgentClock, AgentLog } from './agent-settings.js';
import { CLOSED_BREAKER, recordBlocked, tick, type BlockedBy, type BreakerState } from './breaker.js';
import type { CniAuditVerdict } from './cni-audit-source.js';
import {
  gateVerdict,
  INITIAL_GATE,
  MESH_CONDITION,
  readyToLift,
  trimGate,
  type ConditionStatus,
  type GateSettings,
  type GateState,
  type GateVerdict,
} from './node-gate.js';
import type { SandboxSighting } from './sandbox-events.js';
import type { PluginFailureCause } from './sandbox-failure.js';

export interface GatePorts {
  readNode(): Promise<ApiResult<NodeState>>;
  patchCondition(condition: NodeCondition): Promise<ApiResult<'written'>>;
  removeStartupTaint(): Promise<ApiResult<'changed' | 'unchanged'>>;
  /** The agent's shared, rate-limited write (a failure pauses every write and is logged there). */
  write<T>(operation: string, call: () => Promise<ApiResult<T>>): Promise<T | undefined>;
  postNodeEvent(reason: string, message: string, type: 'Warning' | 'Normal'): Promise<void>;
  /** Both reads have listed once: the node's pods and its sandbox Events. */
  synced(): boolean;
  readonly metrics: {
    meshReady(status: ConditionStatus): void;
    pluginFailures(cause: PluginFailureCause, count: number): void;
  };
  readonly log: AgentLog;
  readonly clock: AgentClock;
  readonly wallNow: () => number;
}

const stamp = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
const same = (a: GateVerdict, b: Pick<NodeCondition, 'status' | 'reason' | 'message'> | undefined): boolean =>
  b !== undefined && a.status === b.status && a.reason === b.reason && a.message === b.message;

/**
 * The node gate's edges: it gathers the agent's signals into GateState, writes the condition on a
 * change (at most once per interval, so a flapping input never becomes a write storm) and as a
 * heartbeat, and lifts the start-up taint once, never putting it back.
 */
export class NodeGateReporter {
  private state: GateState = INITIAL_GATE;
  private lost: BreakerState = CLOSED_BREAKER;
  private written: NodeCondition | undefined;
  private writtenAt = Number.NEGATIVE_INFINITY;
  private known = false;
  private busy = false;
  private lifted = false;
  private shown: GateVerdict | undefined;

  constructor(
    private readonly settings: GateSettings,
    private readonly ports: GatePorts,
  ) {}

  audit(verdict: CniAuditVerdict): void {
    this.state = { ...this.state, audit: verdict };
    this.poke();
  }

  breaker(open: boolean, why: string): void {
    this.state = { ...this.state, breaker: { open, why } };
    this.poke();
  }

  /** A trusted validator run that failed on the CNI, on the agent's clock. */
  validatorFailure(at: number): void {
    this.state = { ...this.state, validatorFailures: [...this.state.validatorFailures, at] };
    this.poke();
  }

  /** A pod the re-check found lost (two sweeps agree): counted by owner and namespace, as the breaker counts. */
  captureLost(by: BlockedBy): void {
    this.lost = recordBlocked(this.lost, this.settings.breaker, by, this.ports.clock.now()).state;
    this.poke();
  }

  sandbox(sighting: SandboxSighting): void {
    const age = Math.max(0, this.ports.wallNow() - sighting.atWallMs);
    if (age >= this.settings.policy.windowMs) return;
    this.ports.metrics.pluginFailures(sighting.cause, sighting.occurrences);
    const failure = {
      at: this.ports.clock.now() - age,
      pod: sighting.pod,
      cause: sighting.cause,
      detail: sighting.detail,
      count: sighting.occurrences,
    };
    this.state = { ...this.state, sandbox: [...this.state.sandbox, failure].slice(-256) };
    this.ports.log.warn(
      { pod: sighting.pod, cause: sighting.cause },
      `mesh CNI plugin failed a sandbox: ${sighting.detail.slice(0, 300)}`,
    );
    this.poke();
  }

  /** On the agent's timer: windows pass, a held change is written, the heartbeat comes. */
  tick(): void {
    this.lost = tick(this.lost, this.settings.breaker, this.ports.clock.now()).state;
    this.poke();
  }

  private poke(): void {
    const now = this.ports.clock.now();
    this.state = trimGate(this.state, this.settings.policy, now);
    const why = `pods of more than ${this.settings.breaker.threshold} owners lost their capture within ${Math.round(this.settings.breaker.windowMs / 1000)} s`;
    this.state = { ...this.state, lost: { open: this.lost.open, why: this.lost.open ? why : '' } };
    const verdict = gateVerdict(this.state, this.settings.policy, now);
    this.announce(verdict);
    if (this.busy) return;
    this.busy = true;
    void this.settle(verdict, now).finally(() => (this.busy = false));
  }

  /** Metric and the Node's Warning on entering MeshPluginFailing (and a Normal on leaving it). */
  private announce(verdict: GateVerdict): void {
    const before = this.shown;
    this.shown = verdict;
    this.ports.metrics.meshReady(verdict.status);
    const failing = (v: GateVerdict | undefined) => v?.reason === 'MeshPluginFailing';
    if (failing(verdict) && !failing(before))
      void this.ports.postNodeEvent('MeshPluginFailing', verdict.message, 'Warning');
    if (!failing(verdict) && failing(before))
      void this.ports.postNodeEvent(
        'MeshPluginRecovered',
        `No ${this.settings.policy.plugin} sandbox failure within the window.`,
        'Normal',
      );
  }

  private async settle(verdict: GateVerdict, now: number): Promise<void> {
    // True waits for both reads to list once: a sandbox failure of a minute ago must not be missed.
    if (this.settings.condition && (verdict.status !== 'True' || this.ports.synced())) await this.report(verdict, now);
    if (
      this.settings.startupTaint &&
      !this.lifted &&
      this.ports.synced() &&
      readyToLift(this.state, this.settings.policy, now)
    )
      await this.lift();
  }

  private async report(verdict: GateVerdict, now: number): Promise<void> {
    if (!this.known) await this.learn();
    if (!this.known) return;
    const changed = !same(verdict, this.written);
    const due = changed
      ? now - this.writtenAt >= this.settings.intervalMs
      : now - this.writtenAt >= this.settings.heartbeatMs;
    if (!due) return;
    const wall = stamp(new Date(this.ports.wallNow()));
    const condition: NodeCondition = {
      type: MESH_CONDITION,
      status: verdict.status,
      reason: verdict.reason,
      message: verdict.message,
      lastHeartbeatTime: wall,
      // Only a change of status is a transition (a new message or reason is not).
      lastTransitionTime:
        this.written && this.written.status === verdict.status ? this.written.lastTransitionTime : wall,
    };
    this.writtenAt = now;
    const outcome = await this.ports.write('condition', () => this.ports.patchCondition(condition));
    if (outcome === undefined) return;
    if (changed)
      this.ports.log.info(
        { status: condition.status, reason: condition.reason },
        `condition ${MESH_CONDITION}: ${condition.message}`,
      );
    this.written = condition;
  }

  /** The condition as the node has it (an agent that restarted keeps its transition time and writes nothing new). */
  private async learn(): Promise<void> {
    const node = await this.ports.write('get-node', () => this.ports.readNode());
    if (!node) return;
    this.known = true;
    const mine = node.conditions.find((condition) => condition.type === MESH_CONDITION);
    if (mine?.status && mine.lastTransitionTime && mine.lastHeartbeatTime) {
      this.written = { ...(mine as NodeCondition), reason: mine.reason ?? '', message: mine.message ?? '' };
      const age = Math.max(0, this.ports.wallNow() - Date.parse(mine.lastHeartbeatTime));
      this.writtenAt = Number.isFinite(age) ? this.ports.clock.now() - age : Number.NEGATIVE_INFINITY;
    }
  }

  private async lift(): Promise<void> {
    const taint = this.settings.startupTaint!;
    const outcome = await this.ports.write('startup-taint', () => this.ports.removeStartupTaint());
    if (outcome === undefined) return;
    this.lifted = true;
    const name = `${taint.key}${taint.effect ? `:${taint.effect}` : ''}`;
    if (outcome === 'unchanged') {
      this.ports.log.info({ taint: name }, 'the start-up taint is not on the node: nothing to lift');
      return;
    }
    this.ports.log.info({ taint: name }, 'node ready for the mesh: start-up taint removed');
    await this.ports.postNodeEvent(
      'InterlockStartupTaintRemoved',
      `Removed the start-up taint ${name}: the CNI audit is clean and no mesh plugin or validator failure was seen within the window.`,
      'Normal',
    );
  }
}
