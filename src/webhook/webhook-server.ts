import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../output/logger.js';
import { leadingUid } from './admission-review.js';
import {
  admit,
  refuse,
  SCOPE_PATHS,
  type AdmissionScope,
  type Admission,
  type InvalidCause,
  type OnError,
} from './admit.js';
import { SMALL_REQUEST_BYTES, type WebhookBudget } from './webhook-budget.js';
import type { TlsPair } from './tls-files.js';
import type { PatchSettings } from './validator-patch.js';
import type { WebhookMetrics } from './webhook-metrics.js';
import { listenOn } from './listen.js';
import { guardConnections } from '../serve/connection-guard.js';

const HANDSHAKE_TIMEOUT_MS = 10_000;
/** The API server sends its ClientHello as soon as it connects; a peer silent this long is not it. */
const FIRST_BYTE_MS = 1000;

export interface WebhookServerOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: TlsPair;
  /** PEM CAs a client certificate must chain to; without it any client may call (docs/admission.md). */
  readonly clientCa?: Buffer;
  readonly settings: PatchSettings;
  readonly onError: OnError;
  /** Every request is answered within this, on the monotonic clock: a slow client gets the --on-error decision. */
  readonly deadlineMs: number;
  readonly maxBodyBytes: number;
  /** What the server may hold at once, from the container's memory limit (webhook-budget.ts). */
  readonly budget: WebhookBudget;
  readonly metrics: WebhookMetrics;
  readonly log: Logger;
}

export interface WebhookServer {
  readonly port: number;
  /** True once drain() started: /readyz (on the metrics port, too) answers 503. */
  readonly draining: () => boolean;
  setTls(pair: TlsPair): void;
  /**
   * Stops accepting, answers what is in flight (at most `timeoutMs`), then closes every connection;
   * resolves with how many were still open then.
   */
  drain(timeoutMs: number): Promise<number>;
}

interface ServerState {
  readonly options: WebhookServerOptions;
  /**
   * Every TCP connection, from accept: one still in its TLS handshake is not yet an HTTP
   * connection, so closeAllConnections misses it and it would hold the drain to the handshake
   * timeout, past the drain deadline.
   */
  readonly sockets: Set<Socket>;
  buffered: number;
  inFlight: number;
  draining: boolean;
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const state: ServerState = { options, sockets: new Set(), buffered: 0, inFlight: 0, draining: false };
  const server = createServer(
    {
      ...secureOptions(options.tls, options.clientCa),
      // A handshake is CPU-bound on both sides: held to the request deadline, a starved node would
      // drop connections the API server then retries; bounded all the same.
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      // How often header and request timeouts are checked (Node's default is 30 s).
      connectionsCheckingInterval: 250,
    },
    (req, res) => route(state, req, res),
  );
  // Past the budget a silent connection gives way to a new one, and one source holds at most half:
  // peers that never send a byte cannot hold the API server's slots (docs/admission.md).
  guardConnections(server, {
    maxTotal: options.budget.maxConnections,
    maxPerSource: Math.max(1, Math.floor(options.budget.maxConnections / 2)),
    firstByteMs: FIRST_BYTE_MS,
  });
  server.headersTimeout = options.deadlineMs;
  server.requestTimeout = options.deadlineMs + 1000;
  // The API server reuses its connections; a new TLS handshake per pod would cost more than the admission.
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket: Socket) => {
    state.sockets.add(socket);
    socket.once('close', () => state.sockets.delete(socket));
  });
  server.on('tlsClientError', (error) => options.log.debug({ err: error.message }, 'TLS handshake failed'));
  const port = await listenOn(server, options.host, options.port);
  return {
    port,
    draining: () => state.draining,
    setTls: (pair) => server.setSecureContext(secureOptions(pair, options.clientCa)),
    drain: (timeoutMs) => drain(server, state, timeoutMs),
  };
}

/**
 * The serving pair, and with a client CA the client's certificate required at the handshake: a
 * caller without one never gets to send a byte of a request.
 */
function secureOptions(pair: TlsPair, clientCa: Buffer | undefined) {
  return {
    cert: pair.cert,
    key: pair.key,
    minVersion: 'TLSv1.2' as const,
    ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

/** The admission paths, each one entry of the MutatingWebhookConfiguration (webhook-manifest.ts). */
const SCOPES: ReadonlyMap<string, AdmissionScope> = new Map(
  Object.entries(SCOPE_PATHS).map(([scope, path]) => [path, scope as AdmissionScope]),
);

function route(state: ServerState, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?', 1)[0];
  if (state.draining) res.setHeader('connection', 'close');
  const scope = SCOPES.get(path ?? '');
  if (scope && req.method === 'POST') return admitRequest(state, req, res, scope);
  if (path === '/healthz') return plain(res, 200, 'ok\n');
  if (path === '/readyz') return state.draining ? plain(res, 503, 'draining\n') : plain(res, 200, 'ok\n');
  req.resume();
  plain(res, scope ? 405 : 404, scope ? 'POST an AdmissionReview\n' : 'not found\n');
}

/** Reads the body within the byte caps and the deadline, then answers exactly once. */
function admitRequest(state: ServerState, req: IncomingMessage, res: ServerResponse, scope: AdmissionScope): void {
  const { options } = state;
  const started = performance.now();
  const chunks: Buffer[] = [];
  let size = 0;
  let answered = false;
  state.inFlight += 1;
  const answer = (admission: Admission, closeAfter: boolean) => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    state.buffered -= sharedBytes(size);
    state.inFlight -= 1;
    sendReview(res, admission, closeAfter ? () => req.destroy() : undefined);
    options.metrics.admitted(admission, (performance.now() - started) / 1000);
    logAdmission(options.log, admission);
  };
  const cut = (cause: InvalidCause, message: string) => {
    // Only the head is copied: the uid is in its first KiB.
    const held = chunks.reduce((total, chunk) => total + chunk.length, 0);
    const head = Buffer.concat(chunks, Math.min(held, 1024)).toString('utf8');
    answer(refuse(leadingUid(head), cause, message, options.onError), true);
  };
  const timer = setTimeout(
    () => cut('deadline', `the request body was not complete within ${options.deadlineMs} ms`),
    options.deadlineMs,
  );
  const declared = Number(req.headers['content-length'] ?? NaN);
  req.on('data', (chunk: Buffer) => {
    if (answered) return;
    if (declared > options.maxBodyBytes || size + chunk.length > options.maxBodyBytes) {
      // Keep the head: the uid is in it, so the decision still reaches the API server.
      if (size === 0) chunks.push(chunk.subarray(0, 1024));
      return cut('too-large', tooLarge(options.maxBodyBytes));
    }
    const shared = sharedBytes(size + chunk.length) - sharedBytes(size);
    if (state.buffered + shared > options.budget.bufferBudgetBytes)
      return cut('busy', `more than ${options.budget.bufferBudgetBytes} bytes of requests are being read at once`);
    chunks.push(chunk);
    size += chunk.length;
    state.buffered += shared;
  });
  req.on('end', () => {
    if (!answered) answer(decide(options, Buffer.concat(chunks).toString('utf8'), scope), false);
  });
  req.on('error', () => cut('malformed', 'the request was cut off'));
  req.on('close', () => {
    if (!answered) cut('malformed', 'the connection closed before the request was complete');
  });
}

const tooLarge = (max: number) => `the request body is over ${max} bytes`;

/** A request's bytes held on the shared buffer budget: those past the share every connection has. */
const sharedBytes = (size: number) => Math.max(0, size - SMALL_REQUEST_BYTES);

/** admit(), and a clean refusal if it throws anyway: no request may end the process. */
function decide(options: WebhookServerOptions, body: string, scope: AdmissionScope): Admission {
  try {
    return admit(body, options.settings, options.onError, options.budget.shape, scope);
  } catch (error) {
    const message = `the request could not be decided (${String((error as Error).message).slice(0, 120)})`;
    return refuse(leadingUid(body), 'internal', message, options.onError);
  }
}

function sendReview(res: ServerResponse, admission: Admission, after?: () => void): void {
  if (res.destroyed || res.headersSent) return after?.();
  const body = JSON.stringify(admission.response);
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(after ? { connection: 'close' } : {}),
  });
  res.end(body, after);
}

function logAdmission(log: Logger, admission: Admission): void {
  const fields = {
    uid: admission.response.response.uid,
    outcome: admission.outcome,
    allowed: admission.response.response.allowed,
    ...(admission.cause
      ? { cause: admission.cause, reason: 'AdmissionRequestInvalid', message: admission.message }
      : {}),
    ...(admission.containers.length ? { containers: admission.containers } : {}),
  };
  if (admission.outcome === 'invalid') log.warn(fields, 'admission request not read');
  else if (admission.outcome === 'denied') log.warn({ ...fields, message: admission.message }, 'pod denied');
  else if (admission.outcome === 'patched')
    log.info(
      fields,
      admission.added ? 'Interlock validator added (Istio ambient)' : 'mesh validator replaced by Interlock',
    );
  else log.debug(fields, 'admission answered without a patch');
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(text);
}

async function drain(server: Server, state: ServerState, timeoutMs: number): Promise<number> {
  state.draining = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const deadline = performance.now() + timeoutMs;
  while (state.inFlight > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  server.closeAllConnections();
  const cutOff = state.sockets.size;
  for (const socket of state.sockets) socket.destroy();
  await closed;
  return cutOff;
}
