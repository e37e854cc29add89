import { formatIp, type Family } from '../addr/ip.js';
import type { AmbientObservation } from './ambient-capture.js';
import type { AttemptOutcome } from './attempt.js';
import { sameEndpoint, type Endpoint } from './endpoint.js';
import type { Arrival } from './listener.js';
import type { ProbeTarget } from './probe-plan.js';
import { unmapped } from './proc-net-tcp.js';

declare const PROOF: unique symbol;

/**
 * Interception of one target, proven: our listener read the client nonce from the very socket
 * the probe opened (the 4-tuple REDIRECT and TPROXY preserve), on the port the rules must deliver
 * to, and the probe read back the server nonce only that listener held. Only `certifyArrival`
 * makes one (the brand cannot be named elsewhere), and `isProof` rejects any copy or forgery.
 */
export interface Proof {
  readonly [PROOF]: true;
  readonly target: ProbeTarget;
  readonly family: Family;
  readonly source: Endpoint;
  readonly arrival: Arrival | TableArrival;
  readonly attempt: number;
}

/**
 * An arrival read from the pod's socket table rather than at a listener of ours (Istio ambient:
 * ztunnel owns the port): the kernel's row of the accepted connection is the witness.
 */
export interface TableArrival {
  readonly listenerPort: number;
  readonly localAddress: string;
  readonly remote: Endpoint;
  readonly witness: 'socket-table';
}

const issued = new WeakSet<object>();

type Interception = Extract<AttemptOutcome, { kind: 'intercepted' }>;

/** The proof an intercepted attempt carries, or why it is not one. */
export function certifyArrival(target: ProbeTarget, outcome: Interception, attempt: number): Proof | string {
  const { arrival, source, handshake, reply } = outcome;
  if (!arrival.clientNonce.equals(handshake.clientNonce))
    return 'the listener read a nonce other than the one this probe sent';
  if (!reply.equals(handshake.serverNonce)) return "the reply did not carry the listener's nonce";
  if (!sameEndpoint(arrival.remote, source)) return 'the arrival did not come from the probe socket';
  if (arrival.listenerPort !== target.expectedPort)
    return `the probe arrived at port ${arrival.listenerPort}, not ${target.expectedPort}`;
  const proof = Object.freeze({ target, family: target.family, source, arrival, attempt }) as unknown as Proof;
  issued.add(proof);
  return proof;
}

export function isProof(value: unknown): value is Proof {
  return typeof value === 'object' && value !== null && issued.has(value);
}

type AmbientCapture = Extract<AmbientObservation, { kind: 'captured' }>;

/**
 * The proof of an ambient capture: the accepted row's peer is the probe socket's own address and
 * port, on the port the rules must deliver to. Checked again here, so no other module can mint one.
 */
export function certifyTableArrival(target: ProbeTarget, outcome: AmbientCapture, attempt: number): Proof | string {
  const { accepted, source } = outcome;
  const peer: Endpoint = { address: formatIp(unmapped(accepted.remote.address)), port: accepted.remote.port };
  const ours: Endpoint = { address: formatIp(unmapped(source.address)), port: source.port };
  if (!sameEndpoint(peer, ours)) return 'the accepted connection did not come from the probe socket';
  if (accepted.local.port !== target.expectedPort)
    return `the probe arrived at port ${accepted.local.port}, not ${target.expectedPort}`;
  if (unmapped(source.address).family !== target.family) return `the probe socket is not ${target.family}`;
  const arrival: TableArrival = {
    listenerPort: accepted.local.port,
    localAddress: formatIp(unmapped(accepted.local.address)),
    remote: peer,
    witness: 'socket-table',
  };
  const proof = Object.freeze({ target, family: target.family, source: ours, arrival, attempt }) as unknown as Proof;
  issued.add(proof);
  return proof;
}
