import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { listenOn } from './listen.js';
import { guardConnections } from '../serve/connection-guard.js';

export interface MetricsServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  /** While true, /readyz answers 503 so the Service stops sending admissions here. */
  readonly draining: () => boolean;
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Bounds a scraper or prober that holds its connection open: these answers are a few KiB. */
const TIMEOUT_MS = 5000;
const MAX_CONNECTIONS = 16;

/**
 * /metrics, /healthz and /readyz in plain HTTP, on a port of their own: the admission port then
 * serves only the API server (which may be held to a client certificate, which a kubelet probe
 * or a Prometheus scrape does not present), and a NetworkPolicy can open each port to its caller.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((req, res) => answer(options, req, res));
  server.headersTimeout = TIMEOUT_MS;
  server.requestTimeout = TIMEOUT_MS;
  // A silent scraper gives way to a new connection (the kubelet's probe), and none holds more than half.
  guardConnections(server, { maxTotal: MAX_CONNECTIONS, maxPerSource: MAX_CONNECTIONS / 2, firstByteMs: 1000 });
  const port = await listenOn(server, options.host, options.port);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(options: MetricsServerOptions, req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  const path = (req.url ?? '/').split('?', 1)[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'GET only\n');
  if (path === '/healthz') return plain(res, 200, 'ok\n');
  if (path === '/readyz') return options.draining() ? plain(res, 503, 'draining\n') : plain(res, 200, 'ok\n');
  if (path !== '/metrics') return plain(res, 404, 'not found\n');
  options.registry.metrics().then(
    (text) => {
      res.writeHead(200, { 'content-type': options.registry.contentType });
      res.end(text);
    },
    () => plain(res, 500, 'metrics unavailable\n'),
  );
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(text);
}
