import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseIp } from '../../src/addr/ip.js';
import { connectedTo } from '../../src/probe/connect-as.js';
import type { ProbeTarget } from '../../src/probe/probe-plan.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A connected socket on loopback (never leaves the machine). */
async function loopbackSocket(): Promise<{ socket: Socket; port: number }> {
  const server = createServer((peer) => peer.destroy());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  return { socket, port };
}

const target = (address: string, port: number): ProbeTarget =>
  ({
    family: 'ipv4',
    path: 'outbound',
    destination: parseIp(address)!,
    port,
    expectedPort: 4140,
    via: 'eth0',
  }) as unknown as ProbeTarget;

describe('the socket a probe child hands back counts only when connected to its target', () => {
  it('connected to the target: accepted', async () => {
    const { socket, port } = await loopbackSocket();
    expect(connectedTo(socket, target('127.0.0.1', port)).kind).toBe('connected');
    socket.destroy();
  });

  it('connected elsewhere (another address or port): an error, and the socket is destroyed', async () => {
    for (const [address, delta] of [
      ['198.51.100.7', 0],
      ['127.0.0.1', 1],
    ] as const) {
      const { socket, port } = await loopbackSocket();
      const opened = connectedTo(socket, target(address, port + delta));
      expect(opened.kind).toBe('error');
      expect(opened.kind === 'error' && opened.code).toMatch(
        /handed back a socket connected to 127\.0\.0\.1:\d+, not /,
      );
      expect(socket.destroyed).toBe(true);
    }
  });

  it('a socket with no peer (never connected): an error', () => {
    const socket = connect({ host: '127.0.0.1', port: 1 });
    socket.on('error', () => undefined);
    const opened = connectedTo(socket, target('127.0.0.1', 1));
    expect(opened.kind).toBe('error');
  });
});
