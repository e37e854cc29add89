import type { Family } from '../addr/ip.js';
import { formatDuration } from '../config/duration.js';
import { familyLabel } from '../network/assess-pod-network.js';
import type { AmbientObservation, ZtunnelPorts } from '../probe/ambient-capture.js';
import { observedMiss, type AmbientResult } from '../probe/ambient-loop.js';
import type { Reason } from '../reason/reason.js';
import { formatElapsed } from '../reason/words.js';
import { failed, passed, type VerdictCheck } from '../verdict/verdict-check.js';
import { describeTarget, PRECEDENCE } from './probe-checks.js';

/** Each way an ambient probe misses, as the one reason an operator acts on. */
const MISS_REASON: Readonly<Record<Exclude<AmbientObservation['kind'], 'captured'>, Reason>> = {
  'not-captured': 'AmbientNotCaptured',
  'ztunnel-not-listening': 'ZtunnelNotListening',
  'not-theirs': 'ZtunnelArrivalUnseen',
  error: 'SocketTableUnreadable',
};

function evidenceLine(result: AmbientResult): string {
  const counts = Object.entries(result.outcomes)
    .map(([kind, count]) => `${kind} x${count}`)
    .join(', ');
  const last = result.last && result.last.kind !== 'captured' ? `; last: ${result.last.sentence}` : '';
  return `${result.target.family}: probe ${describeTarget(result.target)} via ${result.target.via}, must be accepted on ztunnel's port ${result.target.expectedPort} in the pod; ${result.attempts} attempts in ${formatElapsed(result.elapsedMs)}: ${counts || 'none'}${last}${result.status === 'aborted' ? '; stopped before it was decided' : ''}`;
}

/**
 * What a pass does not show, said with it (issue 43): the socket tables name no program, so the
 * listener is not proven to be ztunnel, and a process sharing the pod's network namespace with
 * CAP_NET_RAW could answer the probe itself (it cannot bind the probe's port: the probe socket
 * is not SO_REUSEADDR, and a second socket on it fails the pass).
 */
const ASSUMED =
  "this assumes no other process in the pod's network namespace (the socket tables name no program: the listener is not proven to be ztunnel)";

/**
 * One check per family: it passes only when every port's probe was seen accepted on ztunnel's
 * port from the probe's own socket. A miss is retried up to the deadline (ambient may capture a
 * running pod late), so a failure says what the last telling attempt showed.
 */
export function ambientFamilyCheck(
  family: Family,
  results: readonly AmbientResult[],
  ports: ZtunnelPorts,
  timeoutMs: number,
): VerdictCheck {
  const label = familyLabel(family);
  const name = `probe-${family}`;
  const evidence = results.map(evidenceLine);
  const failure = results.find((result) => result.status === 'failed');
  if (failure) {
    const { last } = failure;
    const head = `${label} connection to ${describeTarget(failure.target)} was not seen arriving at ztunnel's port ${failure.target.expectedPort} in the pod within --timeout ${formatDuration(timeoutMs)} (${failure.attempts} attempts)`;
    if (!last || last.kind === 'captured' || !observedMiss(failure))
      return failed(
        name,
        'ValidationTimeout',
        `${head}: no attempt lasted long enough to tell a missing capture from a slow one; nothing is blamed (raise --timeout)`,
        evidence,
        'validation',
        PRECEDENCE.probe,
      );
    return failed(name, MISS_REASON[last.kind], `${head}: ${last.sentence}`, evidence, 'validation', PRECEDENCE.probe);
  }
  const first = results[0];
  if (!first || results.some((result) => result.status !== 'passed' || !result.proof))
    return { name, status: 'not-run', message: `${label} probe was interrupted`, evidence, required: true };
  const arrival = first.proof?.arrival;
  const seen =
    first.last?.kind === 'captured'
      ? `accepted on ${arrival?.localAddress ?? '?'}:${arrival?.listenerPort ?? first.target.expectedPort} from the probe socket ${arrival ? `${arrival.remote.address}:${arrival.remote.port}` : '?'}, the only socket on that address and port`
      : 'accepted';
  const waited =
    first.attempts > 1
      ? `captured after ${formatElapsed(first.elapsedMs)}, attempt ${first.attempts}: it was not captured at first`
      : `captured at once (${formatElapsed(first.elapsedMs)})`;
  const others = results.slice(1).map((result) => String(result.target.port));
  const head = `${label} connection to ${describeTarget(first.target)} was redirected in the pod to the listener on ztunnel's port ${first.target.expectedPort} (${seen}; ${ports.outbound}, ${ports.inbound} and ${ports.tunnel} listen), ${waited}`;
  const all = others.length > 0 ? `${head}; ports ${others.join(', ')} too` : head;
  return passed(name, `${all}; ${ASSUMED}`, evidence);
}
