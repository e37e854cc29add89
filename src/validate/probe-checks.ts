import { formatIp, type Family } from '../addr/ip.js';
import { formatDuration } from '../config/duration.js';
import { familyLabel } from '../network/assess-pod-network.js';
import type { AttemptOutcome } from '../probe/attempt.js';
import type { ListenError } from '../probe/listener.js';
import type { ProbeResult } from '../probe/probe-loop.js';
import type { ProbeTarget } from '../probe/probe-plan.js';
import { errnoWords, formatElapsed } from '../reason/words.js';
import { failed, passed, type VerdictCheck } from '../verdict/verdict-check.js';

export const PRECEDENCE = { configuration: 0, network: 10, listener: 15, rules: 20, probe: 30 } as const;

export function describeTarget(target: ProbeTarget): string {
  const host = target.family === 'ipv6' ? `[${formatIp(target.destination)}]` : formatIp(target.destination);
  return `${host}:${target.port}`;
}

function pathText(target: ProbeTarget): string {
  const path =
    target.path === 'proxy-loopback' ? "proxy-loopback capture of the proxy uid's own traffic" : 'outbound capture';
  return target.as ? `${path}, as uid ${target.as.uid} gid ${target.as.gid}` : path;
}

function attemptsText(count: number): string {
  return count === 1 ? '1 attempt' : `${count} attempts`;
}

function evidenceLine(result: ProbeResult): string {
  const { target } = result;
  const counts = Object.entries(result.outcomes)
    .map(([kind, count]) => `${kind} x${count}`)
    .join(', ');
  return `${target.family}: probe ${describeTarget(target)} via ${target.via}, ${pathText(target)}, must arrive at port ${target.expectedPort}; ${attemptsText(result.attempts)} in ${formatElapsed(result.elapsedMs)}: ${counts || 'none'}${result.stranger ? `; stranger: ${result.stranger.sentence}` : ''}${result.status === 'aborted' ? '; stopped before it was decided' : ''}`;
}

/**
 * One check per family over every port probed in it: the family passes only when each port's
 * connection was intercepted; the first port that was not names the failure.
 */
export function familyProbeCheck(family: Family, results: readonly ProbeResult[], timeoutMs: number): VerdictCheck {
  const label = familyLabel(family);
  const name = `probe-${family}`;
  const evidence = results.map(evidenceLine);
  // A port stopped because a sibling failed still counts when the network had answered it: the
  // first port in plan order with an answer names the failure, whichever finished first.
  const answeredNo = (result: ProbeResult): boolean =>
    result.status === 'failed' || (result.status === 'aborted' && result.lastConclusive !== undefined);
  const failure = results.find((result) => result.stranger) ?? results.find(answeredNo);
  if (failure && !observedFailure(failure))
    return failed(
      name,
      'ValidationTimeout',
      unobservedSentence(failure, label, timeoutMs),
      evidence,
      'validation',
      PRECEDENCE.probe,
    );
  if (failure)
    return failed(
      name,
      'InterceptionMissing',
      failureSentence(failure, label, timeoutMs),
      evidence,
      'validation',
      PRECEDENCE.probe,
    );
  const first = results[0];
  if (!first || results.some((result) => result.status !== 'passed' || !result.proof)) {
    return { name, status: 'not-run', message: `${label} probe was interrupted`, evidence, required: true };
  }
  const also = results
    .slice(1)
    .map((result) =>
      result.target.path === first.target.path
        ? String(result.target.port)
        : `${result.target.port} (${pathText(result.target)})`,
    );
  const port = first.proof?.arrival.listenerPort ?? first.target.expectedPort;
  const head = `${label} connection to ${describeTarget(first.target)} was intercepted into port ${port} (${pathText(first.target)}, attempt ${first.interceptedAttempt} of ${first.launched}, ${formatElapsed(first.elapsedMs)})`;
  return passed(name, also.length > 0 ? `${head}; ports ${also.join(', ')} too` : head, evidence);
}

/**
 * Silence shorter than this says nothing about the rules: a redirect to a local listener answers
 * in microseconds, but a starved node may not run the validator for a while.
 */
const MIN_TELLING_SILENCE_MS = 250;

/**
 * Whether the network showed the probe was not captured: an answer (refusal, ICMP error, a
 * stranger or another peer), or an attempt that waited long enough in silence. An attempt the
 * deadline cut short, or none at all, is a deadline too short to tell, never the CNI's fault.
 */
function observedFailure(result: ProbeResult): boolean {
  if (result.stranger || result.lastConclusive) return true;
  if (result.lastOutcome?.kind === 'error') return true;
  return result.longestSilenceMs >= MIN_TELLING_SILENCE_MS;
}

function unobservedSentence(result: ProbeResult, label: string, timeoutMs: number): string {
  const what =
    result.attempts === 0
      ? `no probe attempt was answered or timed out (${result.launched} started)`
      : `its longest unanswered attempt waited ${formatElapsed(result.longestSilenceMs)}, too short to tell a missing capture from a slow one`;
  return `${label} probe to ${describeTarget(result.target)} was not decided within --timeout ${formatDuration(timeoutMs)}: ${what}; nothing was observed, so nothing is blamed (raise --timeout)`;
}

function failureSentence(result: ProbeResult, label: string, timeoutMs: number): string {
  const { target } = result;
  const head = `${label} connection to ${describeTarget(target)} was not redirected to port ${target.expectedPort}`;
  if (result.stranger) return `${head}: ${result.stranger.sentence}; a pass could not be told from it`;
  const outcome: AttemptOutcome | undefined = result.lastConclusive ?? result.lastOutcome;
  switch (outcome?.kind) {
    case 'refused':
      return `${head}: it was refused, so it reached no listener of ours (no REDIRECT, or a REDIRECT to a port other than ${target.expectedPort})`;
    case 'unreachable':
      return `${head}: it left the pod uncaptured through ${target.via} and the network answered: ${errnoWords(outcome.code)}`;
    case 'wrong-peer':
      return `${head}: a different peer answered (${outcome.detail})`;
    case 'error':
      return `${head}: connect failed: ${errnoWords(outcome.code)}`;
    default:
      return `${head}: no answer to ${attemptsText(result.attempts)} in ${formatElapsed(result.elapsedMs)} of a ${formatDuration(timeoutMs)} budget; nothing captured it: the mesh's nat ${target.path === 'proxy-loopback' ? 'OUTPUT loopback' : 'OUTPUT'} rules are missing or skip it`;
  }
}

export function listenerCheck(error: ListenError): VerdictCheck {
  const where = `${error.family === 'ipv6' ? `[${error.address}]` : error.address}:${error.port}`;
  if (error.code === 'EADDRINUSE') {
    return failed(
      'probe-listener',
      'ProbePortInUse',
      `port ${error.port} (${error.family}) is already bound by another process in the pod, so the probe cannot stand in for the proxy there`,
      [`listen ${where}: ${errnoWords(error.code)}`],
      'validation',
      PRECEDENCE.listener,
    );
  }
  return failed(
    'probe-listener',
    'ProbePortUnbindable',
    `cannot listen on ${where}: ${errnoWords(error.code)}`,
    [`listen ${where}: ${errnoWords(error.code)}`],
    'validation',
    PRECEDENCE.listener,
  );
}
