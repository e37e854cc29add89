import type { Family, IpAddress } from '../addr/ip.js';
import type { CtState } from '../rules/model.js';

/** The two hooks a connection's first packet meets on its way into the mesh. */
export type TraceHook = 'prerouting' | 'output';

/**
 * A packet question: the first packet of a connection as the nat hooks see it. Locally generated
 * packets (OUTPUT) carry the socket's uid/gid and an out interface; arriving ones (PREROUTING) an
 * in interface and no owner.
 */
export interface Packet {
  readonly family: Family;
  readonly hook: TraceHook;
  readonly protocol: 'tcp' | 'udp';
  readonly source: IpAddress;
  readonly destination: IpAddress;
  readonly sourcePort: number;
  readonly destinationPort: number;
  readonly uid?: number;
  readonly gid?: number;
  readonly inInterface?: string;
  readonly outInterface?: string;
  /** Defaults to `new`: the questions are about connection set-up. */
  readonly ctState?: CtState;
}
