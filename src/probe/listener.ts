import { createServer, type AddressInfo as NetAddressInfo, type Server, type Socket } from 'node:net';
import type { Family } from '../addr/ip.js';
import { readExactly } from './bounded-read.js';
import { decode, encode, MESSAGE_BYTES } from './handshake.js';

/** What the listener saw of one probe connection that presented a nonce we issued. */
export interface Arrival {
  readonly listenerPort: number;
  readonly localAddress: string;
  readonly remoteAddress: string;
  readonly remotePort: number;
}

export type ListenError = { readonly code: string; readonly port: number; readonly family: Family; readonly address: string };

/**
 * Our stand-in for the proxy: bound where the proxy will listen, it answers only connections that
 * carry a nonce issued by this process, so an arrival proves the kernel delivered the probe here.
 */
export class ProbeListener {
  private readonly servers: Server[] = [];
  private readonly expected = new Map<string, { serverNonce: Buffer; onArrival: (arrival: Arrival) => void }>();
  private readonly sockets = new Set<Socket>();

  static readonly READ_TIMEOUT_MS = 2000;

  /** Binds the wildcard address of each family, as the proxy does. */
  async listen(port: number, families: readonly Family[]): Promise<ListenError | undefined> {
    for (const family of families) {
      const address = family === 'ipv4' ? '0.0.0.0' : '::';
      const server = createServer((socket) => this.onConnection(socket, port));
      const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        server.once('error', resolve);
        server.listen({ port, host: address, ipv6Only: family === 'ipv6', exclusive: true }, () => resolve(undefined));
      });
      if (error) return { code: error.code ?? 'EIO', port, family, address };
      server.on('error', () => undefined);
      this.servers.push(server);
    }
    return undefined;
  }

  boundPorts(): number[] {
    return this.servers.map((server) => (server.address() as NetAddressInfo).port);
  }

  expect(clientNonce: Buffer, serverNonce: Buffer, onArrival: (arrival: Arrival) => void): () => void {
    const key = clientNonce.toString('hex');
    this.expected.set(key, { serverNonce, onArrival });
    return () => this.expected.delete(key);
  }

  private onConnection(socket: Socket, port: number): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => this.sockets.delete(socket));
    void readExactly(socket, MESSAGE_BYTES, ProbeListener.READ_TIMEOUT_MS).then((read) => {
      const nonce = read.kind === 'complete' ? decode(read.bytes) : undefined;
      const entry = nonce ? this.expected.get(nonce.toString('hex')) : undefined;
      if (!entry) {
        socket.destroy();
        return;
      }
      entry.onArrival({
        listenerPort: port,
        localAddress: socket.localAddress ?? '?',
        remoteAddress: socket.remoteAddress ?? '?',
        remotePort: socket.remotePort ?? 0,
      });
      socket.end(encode(entry.serverNonce));
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    this.servers.length = 0;
  }
}
