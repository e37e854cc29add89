import type { TaintMatch } from '../config/flag-parsers.js';
import type { BreakerPolicy } from './breaker.js';
import type { CniAuditVerdict } from './cni-audit-source.js';
import type { PluginFailureCause } from './sandbox-failure.js';

/**
 * The node gate, as pure state: is this node ready for meshed pods? The answer is the Node
 * condition `interlock.dev/MeshCNIReady` (`--report-condition`) and decides when the start-up taint
 * comes off (`--startup-taint`). True needs positive evidence: a clean CNI audit. Each signal that
 * says otherwise names itself in the reason.
 */
export const MESH_CONDITION = 'interlock.dev/MeshCNIReady';

export const GATE_REASONS = [
  'MeshCNIReady',
  'AuditPending',
  'CNIConfigBroken',
  'MeshPluginFailing',
  'BreakerOpen',
  'CaptureLost',
] as const;
export type GateReason = (typeof GATE_REASONS)[number];
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface GateVerdict {
  readonly status: ConditionStatus;
  readonly reason: GateReason;
  readonly message: string;
}

/** One sandbox the mesh plugin failed, on the agent's clock. */
export interface SandboxFailure {
  readonly at: number;
  readonly pod: string;
  readonly cause: PluginFailureCause;
  readonly detail: string;
  /** Sandboxes failed (the kubelet folds repeats into one Event's count). */
  readonly count: number;
}

export interface GateState {
  readonly audit: CniAuditVerdict | undefined;
  /** The breaker, and why it opened (validator failures of many owners, or the audit). */
  readonly breaker: { readonly open: boolean; readonly why: string };
  /** Re-check losses of many owners (the breaker's rule), and why. */
  readonly lost: { readonly open: boolean; readonly why: string };
  readonly sandbox: readonly SandboxFailure[];
  /** When trusted validator runs failed on the node's CNI (the start-up taint waits a window after the last). */
  readonly validatorFailures: readonly number[];
}

export const INITIAL_GATE: GateState = {
  audit: undefined,
  breaker: { open: false, why: '' },
  lost: { open: false, why: '' },
  sandbox: [],
  validatorFailures: [],
};

export interface GatePolicy {
  readonly windowMs: number;
  /** The mesh's CNI plugin type, as the Events name it. */
  readonly plugin: string;
}

export interface GateSettings {
  /** Write the Node condition (`--report-condition`). */
  readonly condition: boolean;
  /** The taint to lift once (`--startup-taint`). */
  readonly startupTaint: TaintMatch | undefined;
  /** A changed condition is written at most once per interval; an unchanged one every `heartbeatMs`. */
  readonly intervalMs: number;
  readonly heartbeatMs: number;
  readonly policy: GatePolicy;
  readonly breaker: BreakerPolicy;
}

const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`;
const clip = (text: string, max = 300): string => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** Drops what fell out of the window: a plugin failure of ten minutes ago says nothing about now. */
export function trimGate(state: GateState, policy: GatePolicy, now: number): GateState {
  const recent = (at: number) => now - at < policy.windowMs;
  return {
    ...state,
    sandbox: state.sandbox.filter((failure) => recent(failure.at)),
    validatorFailures: state.validatorFailures.filter(recent),
  };
}

function pluginFailing(failures: readonly SandboxFailure[], policy: GatePolicy): GateVerdict {
  const byCause = new Map<PluginFailureCause, number>();
  for (const failure of failures) byCause.set(failure.cause, (byCause.get(failure.cause) ?? 0) + failure.count);
  const causes = [...byCause].map(([cause, count]) => `${cause} ${count}`).join(', ');
  const total = failures.reduce((sum, failure) => sum + failure.count, 0);
  const last = failures[failures.length - 1]!;
  return {
    status: 'False',
    reason: 'MeshPluginFailing',
    message: clip(
      `The mesh CNI plugin ${policy.plugin} failed ${total} pod sandbox(es) within ${seconds(policy.windowMs)} (${causes}); last, pod ${last.pod}: ${last.detail}`,
      1000,
    ),
  };
}

/** The condition the node's state says, most specific cause first. */
export function gateVerdict(state: GateState, policy: GatePolicy, now: number): GateVerdict {
  const current = trimGate(state, policy, now);
  if (current.audit && !current.audit.healthy)
    return { status: 'False', reason: 'CNIConfigBroken', message: clip(`CNI audit: ${current.audit.message}`, 1000) };
  if (current.sandbox.length > 0) return pluginFailing(current.sandbox, policy);
  if (current.breaker.open)
    return { status: 'False', reason: 'BreakerOpen', message: clip(`Circuit breaker open: ${current.breaker.why}`) };
  if (current.lost.open)
    return {
      status: 'False',
      reason: 'CaptureLost',
      message: clip(`Running pods lost their capture: ${current.lost.why}`),
    };
  if (!current.audit) return { status: 'Unknown', reason: 'AuditPending', message: 'No CNI audit verdict yet.' };
  return {
    status: 'True',
    reason: 'MeshCNIReady',
    message: clip(
      `CNI audit clean (${current.audit.message}); no ${policy.plugin} sandbox failure and no breaker trip within ${seconds(policy.windowMs)}.`,
      1000,
    ),
  };
}

/**
 * Whether the start-up taint may come off: the condition is True and, where validators ran, none
 * failed on the CNI within the window (stricter than the condition, which waits for many owners:
 * lifting is done once and never undone by the agent).
 */
export function readyToLift(state: GateState, policy: GatePolicy, now: number): boolean {
  const current = trimGate(state, policy, now);
  return gateVerdict(current, policy, now).status === 'True' && current.validatorFailures.length === 0;
}
