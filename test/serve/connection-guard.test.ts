import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { guardConnections, type ConnectionLimits, type GuardCounts } from '../../src/serve/connection-guard.js';

/** An echo server under the guard, on loopback. */
async function guarded(limits: ConnectionLimits): Promise<{ server: Server; port: number; counts: GuardCounts }> {
  const server = createServer((socket) => socket.on('data', (chunk) => socket.write(chunk)));
  const counts = guardConnections(server, limits);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, counts };
}

const open: Socket[] = [];
let servers: Server[] = [];

async function idle(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  open.push(socket);
  await once(socket, 'connect');
  return socket;
}

/** Sends a line and resolves with the echo, or with '' when the server closes first. */
async function echo(port: number, localAddress = '127.0.0.1'): Promise<string> {
  const socket = await idle(port, localAddress);
  socket.write('ping');
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString()));
    socket.once('close', () => resolve(''));
  });
}

const closed = (socket: Socket) => (socket.destroyed ? Promise.resolve() : once(socket, 'close'));

afterEach(async () => {
  for (const socket of open.splice(0)) socket.destroy();
  for (const server of servers) server.close();
  servers = [];
});

describe('guardConnections', () => {
  it('a new connection evicts a silent one of its source instead of being refused', async () => {
    const { server, port, counts } = await guarded({ maxTotal: 100, maxPerSource: 4, firstByteMs: 60_000 });
    servers.push(server);
    const silent = await Promise.all([1, 2, 3, 4, 5, 6].map(() => idle(port)));
    expect(await echo(port)).toBe('ping');
    await Promise.all(silent.slice(0, 3).map(closed));
    expect(counts.evicted).toBeGreaterThanOrEqual(3);
    expect(counts.refused).toBe(0);
  });

  it('one source holds at most its share: another source keeps its slots', async () => {
    const { server, port, counts } = await guarded({ maxTotal: 8, maxPerSource: 4, firstByteMs: 60_000 });
    servers.push(server);
    const busy = await Promise.all([1, 2, 3, 4].map(() => idle(port, '127.0.0.2')));
    for (const socket of busy) socket.write('x');
    await Promise.all(busy.map((socket) => once(socket, 'data')));
    // The four busy connections of 127.0.0.2 have all spoken: a fifth from there is refused.
    expect(await echo(port, '127.0.0.2')).toBe('');
    expect(counts.refused).toBe(1);
    expect(await echo(port, '127.0.0.3')).toBe('ping');
  });

  it('a connection that sends nothing is closed after firstByteMs; one that spoke stays', async () => {
    const { server, port, counts } = await guarded({ maxTotal: 8, maxPerSource: 8, firstByteMs: 200 });
    servers.push(server);
    const silent = await idle(port);
    const talker = await idle(port);
    talker.write('hi');
    await once(talker, 'data');
    await closed(silent);
    expect(counts.silentClosed).toBe(1);
    expect(talker.destroyed).toBe(false);
  });

  it('the whole listener: past maxTotal the oldest silent connection of any source gives way', async () => {
    const { server, port, counts } = await guarded({ maxTotal: 3, maxPerSource: 3, firstByteMs: 60_000 });
    servers.push(server);
    const first = await idle(port, '127.0.0.4');
    await idle(port, '127.0.0.5');
    await idle(port, '127.0.0.6');
    expect(await echo(port, '127.0.0.7')).toBe('ping');
    await closed(first);
    expect(counts.evicted).toBe(1);
  });
});
