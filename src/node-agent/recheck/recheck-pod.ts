import type { Family } from '../../addr/ip.js';
import type { ReadOutcome } from '../../rules/read/classify.js';
import type { InterceptionSpec } from '../../config/interception.js';
import { missingListeners, missingText } from '../../probe/ambient-capture.js';
import type { TablesRead } from '../../probe/socket-tables.js';
import type { RuntimeClient, RuntimeFailure } from '../cri/cri-client.js';
import { sandboxNetnsPath } from '../cri/sandbox-netns.js';
import type { AnalysisRequest } from './analysis-request.js';
import type { PodExpectation } from './expectations.js';
import type { RecheckPod } from './meshed-pod.js';
import { podCaptureOf, unknown, type PodCapture, type UnknownCause } from './pod-capture.js';
import type { WorkerOutcome } from './worker-analysis.js';

/**
 * The edges one pod's check goes through: the runtime, the reader in the pod's namespace, the
 * engine (off the agent's event loop: a worker thread with a heap cap, stopped at `deadlineMs`).
 */
export interface RecheckPodPorts {
  readonly runtime: RuntimeClient;
  readonly readRules: (netnsPath: string, families: readonly Family[], timeoutMs: number) => Promise<ReadOutcome[]>;
  readonly analyse: (request: AnalysisRequest, deadlineMs: number) => Promise<WorkerOutcome>;
  /** The pod's TCP socket tables, read in its namespace: where ztunnel listens for an ambient pod. */
  readonly readSockets: (netnsPath: string, timeoutMs: number) => Promise<TablesRead>;
  readonly now: () => number;
  /**
   * The directories of pods' namespaces mounted into the agent (`--netns-dir`): a path the runtime
   * names elsewhere cannot be entered, and is said so instead of read. Unset: any path is tried.
   */
  readonly netnsDirs?: readonly string[];
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
  ports: RecheckPodPorts,
  timeoutMs: number,
): Promise<{ id: string; path: string } | PodCapture> {
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
  const dirs = ports.netnsDirs;
  if (dirs && !dirs.some((dir) => path.value.startsWith(`${dir}/`)))
    return unknown(
      'rules-unreadable',
      `the runtime mounts the pod's network namespace at ${path.value}, outside --netns-dir ${dirs.join(', ')} (what the agent has mounted): print the agent with --netns-dir set to that directory`,
    );
  return { id: ready[0]!.id, path: path.value };
}

/** How much earlier than its worker is stopped the analysis gives up by itself. */
const ANALYSIS_MARGIN_MS = 250;

/**
 * The least time the analysis is given, even when reading used up the pod's deadline (a starved
 * node): a pod's few rules are judged in milliseconds, and a message to the worker and back must
 * not lose its answer. It stays within the sweep's 500 ms grace past the pod's deadline.
 */
const MIN_ANALYSIS_MS = 400;

/**
 * The rules against each configuration the pod may have, parsed once in the analysis worker: the
 * first that holds makes it captured; lost only when every one found a region escaping; otherwise
 * the first unknown. A worker stopped at the deadline or at its heap cap is unknown, never lost.
 */
async function judge(
  expectation: Extract<PodExpectation, { kind: 'spec' }>,
  outcomes: readonly ReadOutcome[],
  ports: RecheckPodPorts,
  leftMs: number,
): Promise<PodCapture> {
  const workerMs = Math.max(leftMs, MIN_ANALYSIS_MS);
  // The analysis stops itself a little before the worker is stopped, so its answer says where it was.
  const remainingMs = Math.max(1, workerMs - ANALYSIS_MARGIN_MS);
  const request = { specs: expectation.specs, outcomes, families: expectation.families, remainingMs };
  const outcome = await ports.analyse(request, workerMs);
  switch (outcome.kind) {
    case 'deadline':
      return unknown('deadline', `the rules analysis did not finish within its ${outcome.ms} ms and was stopped`);
    case 'too-large':
      return unknown('rules-too-large', outcome.message);
    case 'failed':
      return unknown('rules-undecided', `the rules analysis failed: ${outcome.message}`);
    case 'answered': {
      const checks = outcome.answer.inspections.map(podCaptureOf);
      return (
        checks.find((check) => check.kind === 'captured') ??
        checks.find((check) => check.kind === 'unknown') ??
        checks[0] ??
        unknown('no-expectation', 'no configuration to check')
      );
    }
  }
}

/**
 * An ambient pod whose rules hold: ztunnel's listeners read beside them. Rules that send the pod's
 * traffic to ports where nothing listens are an outage (istio/istio#57285), not a capture lost;
 * tables that cannot be read leave the pod unknown, never captured.
 */
async function listenersCheck(
  spec: InterceptionSpec,
  captured: PodCapture,
  path: string,
  ports: RecheckPodPorts,
  timeoutMs: number,
): Promise<PodCapture> {
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
export async function recheckPod(
  pod: RecheckPod,
  expectation: PodExpectation,
  ports: RecheckPodPorts,
  deadlineMs: number,
): Promise<PodCapture> {
  if (pod.terminating) return unknown('terminating', 'the pod is terminating');
  if (expectation.kind === 'unknown') return unknown('no-expectation', expectation.why);
  const end = ports.now() + deadlineMs;
  const left = () => Math.max(1, end - ports.now());
  const found = await locate(pod, ports, left());
  if ('kind' in found) return found;
  const outcomes = await ports.readRules(found.path, expectation.families, left());
  const judged = await judge(expectation, outcomes, ports, left());
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
