import { connect, type Socket } from 'node:net';
import { get } from 'node:http';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer } from '../../src/node-agent/health-server.js';

/** The agent's listener is on the node's network (hostNetwork): anything there may connect to it. */
const held: Socket[] = [];
let server: Server | undefined;

function body(port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}

afterEach(() => {
  for (const socket of held.splice(0)) socket.destroy();
  server?.close();
  server = undefined;
});

describe("the agent's metrics and probe listener", () => {
  it('300 silent connections: /healthz still answers, and the silent ones are closed', async () => {
    server = await startHealthServer(new Registry(), () => true, '127.0.0.1', 0);
    const port = (server.address() as { port: number }).port;
    for (let index = 0; index < 300; index++) {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.on('error', () => undefined);
      held.push(socket);
      await Promise.race([once(socket, 'connect'), once(socket, 'close')]);
    }
    expect(await body(port, '/healthz')).toEqual({ status: 200, text: 'ok\n' });
    // Most were evicted at once by the next connection; the last ones go at the first-byte timeout.
    await Promise.all(held.map((socket) => (socket.destroyed ? undefined : once(socket, 'close'))));
    expect(held.every((socket) => socket.destroyed)).toBe(true);
  });
});
