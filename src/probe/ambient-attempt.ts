import { connect, type Socket } from 'node:net';
import { formatIp, parseIp } from '../addr/ip.js';
import { judgeAmbient, type AmbientConnection, type AmbientObservation, type ZtunnelPorts } from './ambient-capture.js';
import type { ProbeTarget } from './probe-plan.js';
import type { ReadSocketTables } from './socket-tables.js';

const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN']);

export type AmbientAttempt = AmbientObservation | { readonly kind: 'aborted' };

/**
 * One probe connection: connect, read the pod's socket tables while the connection is still
 * open (the accepted row lives only as long as it does), then close it at once. A refusal or
 * silence is judged with the tables too: whether ztunnel's port listens says which failure it is.
 */
export async function attemptAmbient(
  target: ProbeTarget,
  ports: ZtunnelPorts,
  timeoutMs: number,
  signal: AbortSignal,
  readTables: ReadSocketTables,
): Promise<AmbientAttempt> {
  if (signal.aborted) return { kind: 'aborted' };
  // No localAddress: Node binds one with SO_REUSEADDR (libuv sets it on every TCP bind), and a
  // second socket with SO_REUSEADDR may then bind the probe's own address and port and forge the
  // accepted row (issue 43). Bound by connect() itself, the socket is not SO_REUSEADDR, the kernel
  // skips every port another socket bound, and while the probe holds its port any bind() of it
  // (SO_REUSEADDR, SO_REUSEPORT, the wildcard address) fails EADDRINUSE. connect()'s choice may,
  // rarely, share the port with another connected socket (a probe of another target): the pass
  // then refuses (two sockets on the probe's address and port) and the next attempt, a fresh
  // port, decides.
  const socket = connect({
    host: formatIp(target.destination),
    port: target.port,
    family: target.family === 'ipv4' ? 4 : 6,
  });
  try {
    const connection = await awaitConnection(socket, timeoutMs, signal);
    if (connection === 'aborted') return { kind: 'aborted' };
    const tables = readTables();
    if (!tables.ok) return { kind: 'error', sentence: tables.message };
    return judgeAmbient(connection, tables.rows, target.family, ports);
  } finally {
    socket.destroy();
  }
}

function awaitConnection(
  socket: Socket,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<AmbientConnection | 'aborted'> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (value: AmbientConnection | 'aborted'): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = (): void => done('aborted');
    const timer = setTimeout(() => done({ kind: 'no-answer', waitedMs: performance.now() - started }), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      const address = parseIp(socket.localAddress ?? '');
      done(
        address && socket.localPort !== undefined
          ? { kind: 'connected', source: { address, port: socket.localPort } }
          : { kind: 'error', code: 'no local address on the connected socket' },
      );
    });
    socket.once('error', (error: NodeJS.ErrnoException) => done(classify(error.code ?? 'EIO', started)));
  });
}

function classify(code: string, started: number): AmbientConnection {
  if (code === 'ECONNREFUSED') return { kind: 'refused' };
  if (UNREACHABLE_CODES.has(code)) return { kind: 'unreachable', code };
  if (code === 'ETIMEDOUT') return { kind: 'no-answer', waitedMs: performance.now() - started };
  return { kind: 'error', code };
}
