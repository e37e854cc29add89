import type { Server, Socket } from 'node:net';

/**
 * What one listener lets unauthenticated peers hold. A connection that has not sent a byte is
 * the cheapest thing an attacker can hold, so it is what gives way: a new connection evicts the
 * oldest silent one of its source (or of the whole listener) rather than being refused.
 */
export interface ConnectionLimits {
  /** Connections open at once, from every source. */
  readonly maxTotal: number;
  /** Connections open at once from one remote address. */
  readonly maxPerSource: number;
  /** A connection that sent nothing by then is closed (a TLS ClientHello or an HTTP request line is sent at once). */
  readonly firstByteMs: number;
}

export interface GuardCounts {
  /** Connections closed for sending nothing within `firstByteMs`. */
  silentClosed: number;
  /** Silent connections closed to make room for a new one. */
  evicted: number;
  /** New connections refused: every slot of their source, or of the listener, was busy. */
  refused: number;
}

interface Held {
  readonly socket: Socket;
  readonly source: string;
  readonly timer: NodeJS.Timeout;
}

/** Applies `limits` to every connection `server` accepts; returns the live counts. */
export function guardConnections(server: Server, limits: ConnectionLimits): GuardCounts {
  const counts: GuardCounts = { silentClosed: 0, evicted: 0, refused: 0 };
  const held: Held[] = [];
  const release = (socket: Socket) => {
    const index = held.findIndex((entry) => entry.socket === socket);
    if (index < 0) return;
    clearTimeout(held[index]!.timer);
    held.splice(index, 1);
  };
  server.on('connection', (socket: Socket) => {
    const source = socket.remoteAddress ?? '';
    if (!makeRoom(held, source, limits, counts)) {
      counts.refused++;
      socket.destroy();
      return;
    }
    const timer = setTimeout(() => {
      if (socket.bytesRead > 0) return;
      counts.silentClosed++;
      socket.destroy();
    }, limits.firstByteMs);
    timer.unref();
    held.push({ socket, source, timer });
    socket.once('close', () => release(socket));
  });
  return counts;
}

/** Frees a slot for `source` if one is needed, evicting the oldest silent connection; false when none can go. */
function makeRoom(held: Held[], source: string, limits: ConnectionLimits, counts: GuardCounts): boolean {
  const fromSource = held.filter((entry) => entry.source === source && !entry.socket.destroyed);
  if (fromSource.length >= limits.maxPerSource && !evictSilent(fromSource, counts)) return false;
  const live = held.filter((entry) => !entry.socket.destroyed);
  if (live.length >= limits.maxTotal && !evictSilent(live, counts)) return false;
  return true;
}

function evictSilent(candidates: readonly Held[], counts: GuardCounts): boolean {
  const silent = candidates.find((entry) => !entry.socket.destroyed && entry.socket.bytesRead === 0);
  if (!silent) return false;
  counts.evicted++;
  silent.socket.destroy();
  return true;
}
