import { createServer, type Server, type Socket } from 'node:net';
import type { Family } from '../addr/ip.js';
import { readExactly } from './bounded-read.js';
import { describeEndpoint, endpointKey, sameEndpoint, type Endpoint } from './endpoint.js';
import { decode, encode, MESSAGE_BYTES } from './handshake.js';

/**
 * What the listener saw of one probe connection that presented a nonce we issued, from the very
 * socket that sent it: REDIRECT and TPROXY keep the source, so its remote end is our probe's local end.
 */
export interface Arrival {
  readonly listenerPort: number;
  readonly localAddress: string;
  readonly remote: Endpoint;
  /** The nonce the listener read, as it read it. */
  readonly clientNonce: Buffer;
}

/** A connection at the listener that is not one of our probes as the kernel handed it over. */
export interface StrangerArrival {
  readonly listenerPort: number;
  readonly remote: Endpoint;
  /** It presented a nonce of ours: a relay of our own probe, never legitimate. */
  readonly relayed: boolean;
  readonly sentence: string;
}

export type ListenError = {
  readonly code: string;
  readonly port: number;
  readonly family: Family;
  readonly address: string;
};

interface Expectation {
  readonly serverNonce: Buffer;
  readonly source: Endpoint;
  readonly onArrival: (arrival: Arrival) => void;
}

/**
 * Our stand-in for the proxy, bound where the proxy will listen. It answers only a connection
 * that carries a nonce it issued AND comes from the socket that nonce was issued to; every other
 * arrival (a relay replaying our nonce, a stranger) is reported, because it proves that something
 * other than our own intercepted probe reaches the port.
 */
export class ProbeListener {
  private readonly servers: Server[] = [];
  private readonly expected = new Map<string, Expectation>();
  /** Local ends of every probe socket this process opened, so an abandoned attempt is not a stranger. */
  private readonly ownSources = new Set<string>();
  private readonly strangerWatchers = new Set<(stranger: StrangerArrival) => void>();
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

  /** A probe socket's local end, known once connected; recorded before any byte is sent. */
  ownSource(source: Endpoint): void {
    this.ownSources.add(endpointKey(source));
  }

  expect(
    clientNonce: Buffer,
    serverNonce: Buffer,
    source: Endpoint,
    onArrival: (arrival: Arrival) => void,
  ): () => void {
    const key = clientNonce.toString('hex');
    this.ownSource(source);
    this.expected.set(key, { serverNonce, source, onArrival });
    return () => this.expected.delete(key);
  }

  watchStrangers(onStranger: (stranger: StrangerArrival) => void): () => void {
    this.strangerWatchers.add(onStranger);
    return () => this.strangerWatchers.delete(onStranger);
  }

  private onConnection(socket: Socket, port: number): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => this.sockets.delete(socket));
    const remote: Endpoint = { address: socket.remoteAddress ?? '?', port: socket.remotePort ?? 0 };
    void readExactly(socket, MESSAGE_BYTES, ProbeListener.READ_TIMEOUT_MS).then((read) => {
      const nonce = read.kind === 'complete' ? decode(read.bytes) : undefined;
      const entry = nonce ? this.expected.get(nonce.toString('hex')) : undefined;
      if (entry && sameEndpoint(entry.source, remote)) {
        entry.onArrival({
          listenerPort: port,
          localAddress: socket.localAddress ?? '?',
          remote,
          clientNonce: Buffer.from(nonce ?? []),
        });
        socket.end(encode(entry.serverNonce));
        return;
      }
      socket.destroy();
      if (entry && entry.source.address === remote.address) {
        // From the probe's own address but another port: the kernel's NAT picked a new source
        // port to keep two reply tuples apart. Only this namespace can send from its own address
        // (the kernel drops such packets from outside as martians), so it is no relay; but the
        // 4-tuple is not the probe's, so it proves nothing: the attempt is told, and not answered.
        entry.onArrival({
          listenerPort: port,
          localAddress: socket.localAddress ?? '?',
          remote,
          clientNonce: Buffer.from(nonce ?? []),
        });
      } else if (entry) {
        this.reportStranger({
          listenerPort: port,
          remote,
          relayed: true,
          sentence: `our probe's nonce arrived at the listener from ${describeEndpoint(remote)}, not from the probe socket ${describeEndpoint(entry.source)}: something relayed it`,
        });
      } else if (!this.ownSources.has(endpointKey(remote))) {
        this.reportStranger({
          listenerPort: port,
          remote,
          relayed: false,
          sentence: `a connection from ${describeEndpoint(remote)} that is not our probe arrived at the listener port ${port}`,
        });
      }
    });
  }

  private reportStranger(stranger: StrangerArrival): void {
    for (const watcher of this.strangerWatchers) watcher(stranger);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    this.servers.length = 0;
  }
}
