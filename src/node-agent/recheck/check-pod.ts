import type { Family } from '../../addr/ip.js';
import type { InterceptionSpec } from '../../config/interception.js';
import type { ReadOutcome } from '../../rules/read/classify.js';
import { missingListeners, missingText } from '../../probe/ambient-capture.js';
import type { TablesRead } from '../../probe/socket-tables.js';
import type { InspectOptions, RulesInspection } from '../../rules-check/inspection.js';
import type { RuntimeClient, RuntimeFailure } from '../cri/cri-client.js';
import { sandboxNetnsPath } from '../cri/sandbox-netns.js';
import type { PodExpectation } from './expectations.js';
import type { RecheckPod } from './meshed-pod.js';
import { podCheckOf, unknown, type PodCheck, type UnknownCause } from './pod-check.js';

/** The edges one pod's check goes through: the runtime, the reader in the pod's namespace, the engine. */
export interface CheckPorts {
  readonly runtime: RuntimeClient;
  readonly readRules: (netnsPath: string, families: readonly Family[], timeoutMs: number) => Promise<ReadOutcome[]>;
  readonly decide: (
    spec: InterceptionSpec,
    outcomes: readonly ReadOutcome[],
    options: Omit<InspectOptions, 'timeoutMs'>,
  ) => RulesInspection | Promise<RulesInspection>;
  /** The pod's TCP socket tables, read in its namespace: where ztunnel listens for an ambient pod. */
  readonly readSockets: (netnsPath: string, timeoutMs: number) => Promise<TablesRead>;
  readonly now: () => number;
}

const RUNTIME_CAUSE: Readonly<Record<RuntimeFailure, UnknownCause>> = {
  RuntimeUnreachable: 'runtime-unreachable',
  RuntimeTimeout: 'runtime-timeout',
  RuntimeError: 'runtime-error',
  RuntimeAnswerInvalid: 'runtime-error',
};

/** The pod's one ready sandbox and its namespace path, found through the runtime by the pod's uid. */
async function locate(
  pod: RecheckPod,
  ports: CheckPorts,
  timeoutMs: number,
): Promise<{ id: string; path: string } | PodCheck> {
  const listed = await ports.runtime.listSandboxes(pod.uid, timeoutMs);
  if (!listed.ok) return unknown(RUNTIME_CAUSE[listed.error.reason], listed.error.message);
  const ready = listed.value.filter((sandbox) => sandbox.ready && sandbox.uid === pod.uid);
  if (ready.length !== 1)
    return unknown('no-sandbox', `the runtime has ${ready.length} ready sandboxes for pod uid ${pod.uid}`);
  const status = await ports.runtime.sandboxStatus(ready[0]!.id, timeoutMs);
  if (!status.ok) return unknown(RUNTIME_CAUSE[status.error.reason], status.error.message);
  if (!status.value.ready) return unknown('no-sandbox', `sandbox ${ready[0]!.id} is no longer ready`);
  const path = sandboxNetnsPath(status.value.info);
  if (!path.ok)
    return unknown(path.error.reason === 'NetnsClosed' ? 'netns-closed' : 'runtime-error', path.error.message);
  return { id: ready[0]!.id, path: path.value };
}

/**
 * The rules against each configuration the pod may have: the first that holds makes it captured;
 * lost only when every one found a region escaping; otherwise the first unknown.
 */
async function judge(
  expectation: Extract<PodExpectation, { kind: 'spec' }>,
  outcomes: readonly ReadOutcome[],
  ports: CheckPorts,
  end: number,
): Promise<PodCheck> {
  const checks: PodCheck[] = [];
  for (const spec of expectation.specs) {
    const options = { families: expectation.families, mode: 'required' as const, analysisDeadline: end };
    const check = podCheckOf(await ports.decide(spec, outcomes, options));
    if (check.kind === 'captured') return check;
    checks.push(check);
  }
  return (
    checks.find((check) => check.kind === 'unknown') ??
    checks[0] ??
    unknown('no-expectation', 'no configuration to check')
  );
}

/**
 * An ambient pod whose rules hold: ztunnel's listeners read beside them. Rules that send the pod's
 * traffic to ports where nothing listens are an outage (istio/istio#57285), not a capture lost;
 * tables that cannot be read leave the pod unknown, never captured.
 */
async function listenersCheck(
  spec: InterceptionSpec,
  captured: PodCheck,
  path: string,
  ports: CheckPorts,
  timeoutMs: number,
): Promise<PodCheck> {
  if (spec.dataplane !== 'ambient') return captured;
  const tables = await ports.readSockets(path, timeoutMs);
  if (!tables.ok) return unknown('sockets-unreadable', tables.message);
  const ztunnel = { outbound: spec.outboundPort, inbound: spec.inboundPort, tunnel: spec.inboundTunnelPort };
  const missing = missingListeners(tables.rows, ztunnel, 'ipv4');
  if (missing.length === 0) return captured;
  return {
    kind: 'lost',
    reason: 'ZtunnelNotListening',
    message: `its rules are intact but ${missingText(missing)} in its network namespace: ztunnel no longer serves the pod, and the rules send its traffic to no one`,
    evidence: missing.map((port) => `no TCP listener on port ${port}`),
  };
}

/**
 * One pod, within `deadlineMs`: find its namespace through the runtime, read its rules there,
 * check them as its validator would, then ask the runtime again: a sandbox that went away while
 * its rules were read may have been read half torn down, so that answer is unknown, never lost.
 */
export async function checkPod(
  pod: RecheckPod,
  expectation: PodExpectation,
  ports: CheckPorts,
  deadlineMs: number,
): Promise<PodCheck> {
  if (pod.terminating) return unknown('terminating', 'the pod is terminating');
  if (expectation.kind === 'unknown') return unknown('no-expectation', expectation.why);
  const end = ports.now() + deadlineMs;
  const left = () => Math.max(1, end - ports.now());
  const found = await locate(pod, ports, left());
  if ('kind' in found) return found;
  const outcomes = await ports.readRules(found.path, expectation.families, left());
  const judged = await judge(expectation, outcomes, ports, end);
  const check =
    judged.kind === 'captured' && expectation.specs[0]
      ? await listenersCheck(expectation.specs[0], judged, found.path, ports, left())
      : judged;
  if (check.kind !== 'lost') return check;
  const after = await ports.runtime.sandboxStatus(found.id, left());
  if (!after.ok || !after.value.ready)
    return unknown('no-sandbox', `sandbox ${found.id} went away while its rules were read`);
  return check;
}
