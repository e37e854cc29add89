import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { guardConnections } from '../serve/connection-guard.js';

/**
 * The agent listens on the node's network (hostNetwork): anything on the node or the cluster may
 * connect. Bounded like the webhook's metrics port, so idle peers cannot grow its memory or
 * starve the kubelet's probes.
 */
const LIMITS = { maxTotal: 64, maxPerSource: 16, firstByteMs: 1000 } as const;
const TIMEOUT_MS = 5000;

/** /metrics (Prometheus text), /healthz (the process answers), /readyz (the first list has synced). */
export function startHealthServer(
  registry: Registry,
  ready: () => boolean,
  host: string,
  port: number,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const isReady = ready();
      res.writeHead(isReady ? 200 : 503, { 'content-type': 'text/plain' });
      res.end(isReady ? 'ok\n' : 'pods not listed yet\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  });
  server.headersTimeout = TIMEOUT_MS;
  server.requestTimeout = TIMEOUT_MS;
  server.keepAliveTimeout = TIMEOUT_MS;
  guardConnections(server, LIMITS);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
