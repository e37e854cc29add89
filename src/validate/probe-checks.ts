import { formatIp } from '../addr/ip.js';
import { formatDuration } from '../config/duration.js';
import { familyLabel } from '../network/assess-pod-network.js';
import type { AttemptOutcome } from '../probe/attempt.js';
import type { ListenError } from '../probe/listener.js';
import type { ProbeResult } from '../probe/prove-interception.js';
import type { ProbeTarget } from '../probe/probe-plan.js';
import { failed, passed, type Check } from '../verdict/check.js';

export const PRECEDENCE = { configuration: 0, network: 10, listener: 15, rules: 20, probe: 30 } as const;

export function describeTarget(target: ProbeTarget): string {
  const host = target.family === 'ipv6' ? `[${formatIp(target.destination)}]` : formatIp(target.destination);
  return `${host}:${target.port}`;
}

export function probeCheck(result: ProbeResult, timeoutMs: number): Check {
  const { target } = result;
  const label = familyLabel(target.family);
  const name = `probe-${target.family}`;
  const road = target.path === 'proxy-loopback' ? 'proxy-loopback capture (the proxy uid\'s own traffic)' : 'outbound capture';
  const counts = Object.entries(result.outcomes).map(([kind, count]) => `${kind} x${count}`).join(', ');
  const evidence = [
    `${target.family}: probe ${describeTarget(target)} via ${target.via}, ${road}, must arrive at port ${target.expectedPort}; ${result.attempts} attempt(s) in ${result.elapsedMs} ms: ${counts || 'none'}`,
  ];
  if (result.status === 'passed' && result.arrival) {
    const arrival = result.arrival;
    return passed(name, `${label} connection to ${describeTarget(target)} was intercepted into port ${arrival.listenerPort} (${road}, attempt ${result.interceptedAttempt} of ${result.launched}, ${result.elapsedMs} ms)`, evidence);
  }
  if (result.status === 'aborted') {
    return { name, status: 'not-run', message: `${label} probe was interrupted`, evidence, required: true };
  }
  return failed(name, 'InterceptionMissing', failureSentence(result, label, timeoutMs), evidence, 'validation', PRECEDENCE.probe);
}

function failureSentence(result: ProbeResult, label: string, timeoutMs: number): string {
  const { target } = result;
  const head = `${label} connection to ${describeTarget(target)} was not redirected to port ${target.expectedPort}`;
  const outcome: AttemptOutcome | undefined = result.lastConclusive ?? result.lastOutcome;
  switch (outcome?.kind) {
    case 'refused':
      return `${head}: it was refused, so it reached no listener of ours (no REDIRECT, or a REDIRECT to a port other than ${target.expectedPort})`;
    case 'unreachable':
      return `${head}: it left the pod uncaptured through ${target.via} and the network answered ${outcome.code}`;
    case 'wrong-peer':
      return `${head}: a different peer answered (${outcome.detail})`;
    case 'error':
      return `${head}: connect failed with ${outcome.code}`;
    default:
      return `${head}: no answer within ${formatDuration(timeoutMs)} over ${result.attempts} attempt(s); nothing captured it (the mesh's nat ${target.path === 'proxy-loopback' ? 'OUTPUT loopback' : 'OUTPUT'} rules are missing or skip it)`;
  }
}

export function listenerCheck(error: ListenError): Check {
  const where = `${error.family === 'ipv6' ? `[${error.address}]` : error.address}:${error.port}`;
  if (error.code === 'EADDRINUSE') {
    return failed('probe-listener', 'ProbePortInUse', `port ${error.port} (${error.family}) is already bound by another process in the pod, so the probe cannot stand in for the proxy there`, [`listen ${where}: ${error.code}`], 'validation', PRECEDENCE.listener);
  }
  return failed('probe-listener', 'ProbePortUnbindable', `cannot listen on ${where}: ${error.code}`, [`listen ${where}: ${error.code}`], 'validation', PRECEDENCE.listener);
}
