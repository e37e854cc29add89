import { connect, type Socket } from 'node:net';
import { formatIp } from '../addr/ip.js';
import { readExactly, type BoundedRead } from './bounded-read.js';
import { connectAs, type Opened } from './connect-as.js';
import type { Endpoint } from './endpoint.js';
import { decode, encode, MESSAGE_BYTES, newHandshake, type Handshake } from './handshake.js';
import type { Arrival, ProbeListener } from './listener.js';
import type { ProbeTarget } from './probe-plan.js';

/**
 * What one connection attempt showed. `conclusive` outcomes are answers from the network (a
 * refusal, an ICMP error, a stranger answering); silence is not, because rules may still land.
 */
export type AttemptOutcome =
  | {
      readonly kind: 'intercepted';
      readonly arrival: Arrival;
      readonly source: Endpoint;
      readonly handshake: Handshake;
      readonly reply: Buffer;
    }
  | { readonly kind: 'no-answer'; readonly stage: 'connect' | 'reply' }
  | { readonly kind: 'refused' }
  | { readonly kind: 'unreachable'; readonly code: string }
  | { readonly kind: 'wrong-peer'; readonly detail: string }
  | { readonly kind: 'error'; readonly code: string }
  | { readonly kind: 'aborted' };

const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL']);

export function isConclusive(outcome: AttemptOutcome): boolean {
  return outcome.kind === 'refused' || outcome.kind === 'unreachable' || outcome.kind === 'wrong-peer';
}

export async function attemptProbe(
  target: ProbeTarget,
  listener: ProbeListener,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  if (signal.aborted) return { kind: 'aborted' };
  const handshake = newHandshake();
  const started = performance.now();
  const remaining = (): number => Math.max(1, timeoutMs - (performance.now() - started));
  let onAbort = (): void => undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  let forget = (): void => undefined;
  let socket: Socket | undefined;
  try {
    const opened = target.as
      ? await connectAs(target, target.as, remaining(), signal)
      : await connectHere(target, listener, remaining(), signal);
    if (opened.kind === 'aborted') return opened;
    if (opened.kind === 'error') return classifyError(opened.code);
    if (opened.kind !== 'connected') return opened;
    socket = opened.socket;
    const source: Endpoint = { address: socket.localAddress ?? '?', port: socket.localPort ?? 0 };
    let arrival: Arrival | undefined;
    forget = listener.expect(handshake.clientNonce, handshake.serverNonce, source, (seen) => {
      arrival = seen;
    });
    socket.write(encode(handshake.clientNonce));
    const reply = await Promise.race([readExactly(socket, MESSAGE_BYTES, remaining()), aborted]);
    if (reply === 'aborted') return { kind: 'aborted' };
    return judgeReply(reply, handshake, socket, source, arrival, timeoutMs);
  } finally {
    // An attempt abandoned mid-handshake may still reach the listener: it is ours, not a stranger.
    if (socket?.localPort !== undefined)
      listener.ownSource({ address: socket.localAddress ?? '?', port: socket.localPort });
    signal.removeEventListener('abort', onAbort);
    forget();
    socket?.destroy();
  }
}

/**
 * Connects from this process. Bound to the wildcard before connecting, the socket gets a source
 * port no other socket holds: connect()'s own choice may share a port across destinations, and two
 * probes redirected to one listener from one port would make NAT rewrite the source port, hiding
 * the probe's 4-tuple.
 */
async function connectHere(
  target: ProbeTarget,
  listener: ProbeListener,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Opened | AttemptOutcome> {
  const socket = connect({
    host: formatIp(target.destination),
    port: target.port,
    family: target.family === 'ipv4' ? 4 : 6,
    localAddress: target.family === 'ipv4' ? '0.0.0.0' : '::',
  });
  let onAbort = (): void => undefined;
  const aborted = new Promise<{ kind: 'aborted' }>((resolve) => {
    onAbort = () => resolve({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const connected = await Promise.race([awaitConnect(socket, timeoutMs), aborted]);
  signal.removeEventListener('abort', onAbort);
  if (connected.kind === 'connected') return { kind: 'connected', socket };
  if (socket.localPort !== undefined)
    listener.ownSource({ address: socket.localAddress ?? '?', port: socket.localPort });
  socket.destroy();
  return connected;
}

function awaitConnect(socket: Socket, timeoutMs: number): Promise<AttemptOutcome | { readonly kind: 'connected' }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'no-answer', stage: 'connect' }), timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve({ kind: 'connected' });
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(classifyError(error.code ?? 'EIO'));
    });
    socket.once('close', () => clearTimeout(timer));
  });
}

function judgeReply(
  reply: BoundedRead,
  handshake: Handshake,
  socket: Socket,
  source: Endpoint,
  arrival: Arrival | undefined,
  timeoutMs: number,
): AttemptOutcome {
  const peer = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
  if (reply.kind === 'complete') {
    const nonce = decode(reply.bytes);
    if (nonce && nonce.equals(handshake.serverNonce) && arrival)
      return { kind: 'intercepted', arrival, source, handshake, reply: Buffer.from(nonce) };
    return {
      kind: 'wrong-peer',
      detail: `${peer} answered with ${reply.bytes.length} bytes that are not our listener's nonce`,
    };
  }
  if (reply.kind === 'timeout') {
    // Something accepted the connection but never answered: not our listener, which replies at once.
    return reply.bytes.length === 0 && arrival === undefined
      ? { kind: 'wrong-peer', detail: `${peer} accepted the connection but sent nothing within ${timeoutMs} ms` }
      : { kind: 'wrong-peer', detail: `${peer} sent ${reply.bytes.length} unexpected bytes` };
  }
  if (arrival && (arrival.remote.address !== source.address || arrival.remote.port !== source.port)) {
    return {
      kind: 'wrong-peer',
      detail: `our listener saw this probe arrive from port ${arrival.remote.port}, not from its socket's port ${source.port} (NAT rewrote it); not counted as proof`,
    };
  }
  if (reply.kind === 'error') return classifyError(reply.code);
  return {
    kind: 'wrong-peer',
    detail: `${peer} ${reply.kind === 'overflow' ? 'sent more than a probe reply' : `closed the connection after ${reply.bytes.length} bytes`}`,
  };
}

function classifyError(code: string): AttemptOutcome {
  if (code === 'ECONNREFUSED') return { kind: 'refused' };
  if (UNREACHABLE_CODES.has(code)) return { kind: 'unreachable', code };
  if (code === 'ECONNRESET') return { kind: 'wrong-peer', detail: 'the connection was reset by its peer' };
  if (code === 'ETIMEDOUT') return { kind: 'no-answer', stage: 'connect' };
  return { kind: 'error', code };
}
