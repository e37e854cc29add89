import { formatIp, sameIp, type Family } from '../addr/ip.js';
import { hostPort } from '../addr/host-port.js';
import { errnoWords, formatElapsed } from '../reason/words.js';
import { TCP_STATE, unmapped, type SocketRow, type TableEndpoint } from './proc-net-tcp.js';

/** ztunnel's ports in the pod (the preset's): outbound capture, inbound plaintext, inbound HBONE. */
export interface ZtunnelPorts {
  readonly outbound: number;
  readonly inbound: number;
  readonly tunnel: number;
}

/** How one probe connection ended, as the socket saw it, before the socket tables are read. */
export type AmbientConnection =
  | { readonly kind: 'connected'; readonly source: TableEndpoint }
  | { readonly kind: 'refused' }
  | { readonly kind: 'unreachable'; readonly code: string }
  | { readonly kind: 'no-answer'; readonly waitedMs: number }
  | { readonly kind: 'error'; readonly code: string };

/** What one attempt showed, once the pod's socket tables were read beside it. */
export type AmbientObservation =
  | { readonly kind: 'captured'; readonly accepted: SocketRow; readonly source: TableEndpoint }
  | { readonly kind: 'ztunnel-not-listening'; readonly missing: readonly number[]; readonly sentence: string }
  | { readonly kind: 'not-theirs'; readonly sentence: string }
  | { readonly kind: 'not-captured'; readonly sentence: string; readonly silentMs?: number }
  | { readonly kind: 'error'; readonly sentence: string };

/** States in which a socket on the listener's port can be the server end of our connection. */
const NOT_ACCEPTED = new Set<number>([TCP_STATE.listen, TCP_STATE.synSent, TCP_STATE.timeWait, TCP_STATE.close]);

/**
 * The proof: the pod's own socket table holds a connection accepted on ztunnel's outbound port
 * whose peer is exactly the probe socket's local address and port, and a listener on that port.
 * Only our own SYN, redirected inside this namespace, can make such a row: a peer outside the pod
 * lives in another namespace's table, and a relay reaching the port connects from its own
 * address and port, not ours.
 */
export function judgeAmbient(
  connection: AmbientConnection,
  rows: readonly SocketRow[],
  family: Family,
  ports: ZtunnelPorts,
): AmbientObservation {
  const outboundListens = listens(rows, ports.outbound, family);
  const missing = missingListeners(rows, ports, family);
  switch (connection.kind) {
    case 'connected':
      return judgeConnected(connection.source, rows, ports, missing);
    case 'refused':
      return outboundListens
        ? notCaptured(`it was refused, and not by port ${ports.outbound}, where a listener waits: it left the pod`)
        : {
            kind: 'ztunnel-not-listening',
            missing,
            sentence: `it was refused and nothing in the pod listens on port ${ports.outbound}: redirected to ztunnel's port with no ztunnel behind it (${missingText(missing)})`,
          };
    case 'unreachable':
      return notCaptured(
        `it left the pod uncaptured and the network answered: ${errnoWords(connection.code)}${listenerNote(missing)}`,
      );
    case 'no-answer':
      return {
        kind: 'not-captured',
        sentence: `no answer in ${formatElapsed(connection.waitedMs)}: it left the pod uncaptured (a redirect to ztunnel answers at once)${listenerNote(missing)}`,
        silentMs: connection.waitedMs,
      };
    case 'error':
      return { kind: 'error', sentence: `connect failed in the pod: ${errnoWords(connection.code)}` };
  }
}

function judgeConnected(
  source: TableEndpoint,
  rows: readonly SocketRow[],
  ports: ZtunnelPorts,
  missing: readonly number[],
): AmbientObservation {
  const accepted = rows.find(
    (row) =>
      row.local.port === ports.outbound &&
      !NOT_ACCEPTED.has(row.state) &&
      row.remote.port === source.port &&
      sameIp(unmapped(row.remote.address), unmapped(source.address)),
  );
  const forged = accepted ? forgeryTell(accepted, source, rows) : undefined;
  if (forged) return { kind: 'not-theirs', sentence: forged };
  if (accepted && missing.length === 0) return { kind: 'captured', accepted, source };
  if (accepted)
    return {
      kind: 'ztunnel-not-listening',
      missing,
      sentence: `it reached port ${ports.outbound}, but ${missingText(missing)}: ztunnel has not bound all its listeners in the pod`,
    };
  if (!missing.includes(ports.outbound))
    return {
      kind: 'not-theirs',
      sentence: `something accepted it, but the pod's socket tables hold no connection on port ${ports.outbound} from the probe socket ${describe(source)}: the listener on ${ports.outbound} did not receive it (a peer outside the pod or a relay answered, or the sample missed it)`,
    };
  return notCaptured(
    `a peer outside the pod accepted it: no connection from the probe socket ${describe(source)} reached port ${ports.outbound}, where nothing listens`,
  );
}

/**
 * The two tells of a forged accept (issue 43): REDIRECT delivers locally generated traffic to the
 * loopback address, so the accepted end's local address is 127.0.0.1 (or ::1); and only the probe
 * holds its own address and port. Assumes no other process shares the pod's network namespace
 * with a socket the kernel let it bind there.
 */
function forgeryTell(accepted: SocketRow, source: TableEndpoint, rows: readonly SocketRow[]): string | undefined {
  const local = unmapped(accepted.local.address);
  const loopback = local.family === 'ipv4' ? LOOPBACK_V4 : 1n;
  if (local.value !== loopback)
    return `the connection on port ${accepted.local.port} has local address ${formatIp(local)}, not the loopback address (127.0.0.1 or ::1) a REDIRECT gives: not a redirect of the probe`;
  const holders = rows.filter(
    (row) => row.local.port === source.port && sameIp(unmapped(row.local.address), unmapped(source.address)),
  );
  if (holders.length > 1)
    return `${holders.length} sockets hold the probe socket's address ${describe(source)}: another socket shares it, so the accepted connection may not be the probe's`;
  return undefined;
}

const LOOPBACK_V4 = 0x7f000001n;

/**
 * A listener on `port` that can take a connection of `family`: an IPv6 listener ([::]) also takes
 * IPv4 unless it is IPv6-only, which the table does not say; an IPv4 one never takes IPv6.
 */
function listens(rows: readonly SocketRow[], port: number, family: Family): boolean {
  return rows.some(
    (row) => row.state === TCP_STATE.listen && row.local.port === port && (family === 'ipv4' || row.table === 'ipv6'),
  );
}

/**
 * ztunnel's ports with no listener in these socket tables: the outbound one must take `family`;
 * the inbound ones any listener (they are reached from outside the pod, by either family).
 */
export function missingListeners(rows: readonly SocketRow[], ports: ZtunnelPorts, family: Family): number[] {
  return [ports.outbound, ports.inbound, ports.tunnel].filter(
    (port) => !listens(rows, port, port === ports.outbound ? family : 'ipv4'),
  );
}

export function missingText(missing: readonly number[]): string {
  return `nothing listens on ${missing.length === 1 ? 'port' : 'ports'} ${missing.join(', ')}`;
}

function notCaptured(sentence: string): AmbientObservation {
  return { kind: 'not-captured', sentence };
}

function listenerNote(missing: readonly number[]): string {
  return missing.length > 0 ? `; and ${missingText(missing)}` : '';
}

function describe(endpoint: TableEndpoint): string {
  return hostPort(formatIp(unmapped(endpoint.address)), endpoint.port);
}
