import { formatPortSet, portSetHas, type PortSet } from '../addr/port-set.js';
import type { InterceptionSpec } from '../config/interception.js';

/** The fixed part of the spread: the ports almost every workload uses. */
const WELL_KNOWN_PORTS: readonly number[] = [80, 443];

/** The probe's first choice when the operator names none: high ports no preset excludes. */
export const PREFERRED_PORTS: readonly number[] = [20001, 20002, 31337, 40001];

/** At most this many ports per family: a REDIRECT catches every port, so more prove little more. */
const MAX_PORTS_PER_FAMILY = 8;

export interface PortSpread {
  readonly ports: readonly number[];
  /** What was left out and why, for the log. */
  readonly skipped: readonly string[];
}

/**
 * The ports one family is probed on, first port first: without capabilities the probe is the only
 * check, so one port would let a rule that spares 443 (or the random port's range) pass unseen.
 * That spread is made only when every exclusion is known (`spread`): a pod may legitimately skip
 * 443 or 3306 by an annotation the validator cannot see, and failing it would be a false verdict.
 * Otherwise the first port (the one the mesh guarantees) and the explicitly included ports.
 */
export function spreadPorts(
  first: number,
  randomPort: number,
  includeOutboundPorts: PortSet,
  usable: (port: number) => string | undefined,
  spread: boolean,
): PortSpread {
  const included =
    includeOutboundPorts.kind === 'ranges'
      ? includeOutboundPorts.ranges.flatMap((range) =>
          range.from === range.to ? [range.from] : [range.from, range.to],
        )
      : [];
  const wanted = spread ? [first, ...WELL_KNOWN_PORTS, randomPort, ...included] : [first, ...included];
  const ports: number[] = [];
  const skipped: string[] = [];
  for (const port of wanted) {
    if (ports.includes(port)) continue;
    const why = usable(port);
    if (why !== undefined) {
      skipped.push(`port ${port}: ${why}`);
      continue;
    }
    if (ports.length >= MAX_PORTS_PER_FAMILY) {
      skipped.push(`port ${port}: more than ${MAX_PORTS_PER_FAMILY} ports per family`);
      continue;
    }
    ports.push(port);
  }
  return { ports, skipped };
}

/** Why an outbound probe port would not be captured by address, or undefined when it would be. */
export function outboundPortProblem(
  spec: InterceptionSpec,
  listenerPorts: readonly number[],
  byPortOnly: boolean,
): (port: number) => string | undefined {
  return (port) => {
    if (listenerPorts.includes(port)) return 'a listener port of the validator';
    if (portSetHas(spec.excludeOutboundPorts, port))
      return `excluded by --exclude-outbound-ports ${formatPortSet(spec.excludeOutboundPorts)}`;
    if (byPortOnly && !portSetHas(spec.includeOutboundPorts, port))
      return 'the destination is captured only by --include-outbound-ports, which does not list it';
    return undefined;
  };
}

/** Why a proxy-loopback probe port is not captured into the inbound port (Istio's exceptions). */
export function loopbackPortProblem(
  spec: InterceptionSpec,
  listenerPorts: readonly number[],
): (port: number) => string | undefined {
  return (port) => {
    if (listenerPorts.includes(port)) return 'a listener port of the validator';
    if (port === spec.inboundTunnelPort) return 'the inbound tunnel port, never redirected';
    if (portSetHas(spec.excludeInboundPorts, port))
      return `excluded by --exclude-inbound-ports ${formatPortSet(spec.excludeInboundPorts)}`;
    if (portSetHas(spec.excludeOutboundPorts, port))
      return `excluded by --exclude-outbound-ports ${formatPortSet(spec.excludeOutboundPorts)}`;
    return undefined;
  };
}
