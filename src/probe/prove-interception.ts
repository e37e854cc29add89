import type { Family } from '../addr/ip.js';
import { attemptProbe } from './attempt.js';
import { systemClock, type Clock } from './clock.js';
import { ProbeListener, type ListenError, type StrangerArrival } from './listener.js';
import { probeUntilDecided, type ProbeHooks, type ProbeResult, type ProbeTiming } from './probe-loop.js';
import type { ProbeTarget } from './probe-plan.js';

export type ProbeRun =
  | { readonly kind: 'listen-failed'; readonly error: ListenError }
  | { readonly kind: 'probed'; readonly results: readonly ProbeResult[] };

/**
 * Proves every target concurrently, each with its own retry loop, against listeners bound where
 * the proxy will listen. A stranger at a listener port fails every target that must arrive there.
 */
export async function proveInterception(
  targets: readonly ProbeTarget[],
  timing: ProbeTiming,
  signal: AbortSignal,
  hooks: ProbeHooks = {},
  clock: Clock = systemClock,
): Promise<ProbeRun> {
  const listener = new ProbeListener();
  const strangers = new Map<number, Promise<StrangerArrival>>();
  const resolvers = new Map<number, (stranger: StrangerArrival) => void>();
  // At the outbound port only this process's own connections can legitimately arrive, so any
  // stranger there fails the probe. The inbound port (the proxy-loopback path) also receives
  // whatever inbound traffic the mesh already captures; there only a relay of our nonce fails it.
  const strict = new Set(targets.filter((target) => target.path === 'outbound').map((target) => target.expectedPort));
  const unwatch = listener.watchStrangers((stranger) => {
    if (stranger.relayed || strict.has(stranger.listenerPort)) resolvers.get(stranger.listenerPort)?.(stranger);
    else hooks.onStranger?.(stranger);
  });
  try {
    for (const [port, families] of familiesByPort(targets)) {
      strangers.set(port, new Promise((resolve) => resolvers.set(port, resolve)));
      const error = await listener.listen(port, families);
      if (error) return { kind: 'listen-failed', error };
    }
    const launch = (target: ProbeTarget, lifetimeMs: number, stop: AbortSignal) =>
      attemptProbe(target, listener, lifetimeMs, stop);
    // One failed port fails its family: the family's other ports stop there, rather than waiting
    // out the deadline for ICMP errors the network rate-limits.
    const families = new Map<Family, AbortController>();
    for (const target of targets) if (!families.has(target.family)) families.set(target.family, new AbortController());
    const results = await Promise.all(
      targets.map(async (target) => {
        const family = families.get(target.family) ?? new AbortController();
        const stop = abortedByEither(signal, family.signal);
        try {
          const result = await probeUntilDecided(target, timing, {
            launch,
            clock,
            hooks,
            signal: stop.signal,
            stranger: strangers.get(target.expectedPort) ?? new Promise(() => undefined),
          });
          if (result.status === 'failed') family.abort('a sibling port failed');
          return result;
        } finally {
          stop.release();
        }
      }),
    );
    return { kind: 'probed', results };
  } finally {
    unwatch();
    await listener.close();
  }
}

/**
 * A signal aborted when either source is. Not AbortSignal.any: its sources hold the composite
 * only weakly, and Node has lost such an abort when the composite was collected. Here each source
 * holds a listener that holds the controller, strongly, until `release` removes both.
 */
function abortedByEither(first: AbortSignal, second: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  if (first.aborted || second.aborted) abort();
  first.addEventListener('abort', abort, { once: true });
  second.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      first.removeEventListener('abort', abort);
      second.removeEventListener('abort', abort);
    },
  };
}

function familiesByPort(targets: readonly ProbeTarget[]): Map<number, Family[]> {
  const byPort = new Map<number, Family[]>();
  for (const target of targets) {
    const families = byPort.get(target.expectedPort) ?? [];
    if (!families.includes(target.family)) families.push(target.family);
    byPort.set(target.expectedPort, families);
  }
  return byPort;
}
