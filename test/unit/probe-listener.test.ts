import { connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseIp } from '../../src/addr/ip.js';
import { attemptProbe } from '../../src/probe/attempt.js';
import { ProbeListener, type StrangerArrival } from '../../src/probe/listener.js';
import type { ProbeTarget } from '../../src/probe/probe-plan.js';
import { certifyArrival } from '../../src/probe/proof.js';

// The listener and one attempt, in-process on loopback: what counts as our own arrival, what is a
// relay, what is a stranger. (The namespace tests do the same through real NAT rules.)
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startListener(): Promise<{
  listener: ProbeListener;
  port: number;
  strangers: StrangerArrival[];
  firstStranger: Promise<StrangerArrival>;
}> {
  const listener = new ProbeListener();
  const port = await freePort();
  expect(await listener.listen(port, ['ipv4'])).toBeUndefined();
  const strangers: StrangerArrival[] = [];
  let first: (stranger: StrangerArrival) => void = () => undefined;
  const firstStranger = new Promise<StrangerArrival>((resolve) => {
    first = resolve;
  });
  listener.watchStrangers((stranger) => {
    strangers.push(stranger);
    first(stranger);
  });
  cleanups.push(() => listener.close());
  return { listener, port, strangers, firstStranger };
}

/** A relay on 127.0.0.2 that forwards every connection to the listener, from `from`. */
async function startRelay(listenerPort: number, from: string): Promise<number> {
  const port = await freePort();
  const server: Server = createServer((inbound) => {
    const outbound = connect({ host: '127.0.0.1', port: listenerPort, localAddress: from });
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.2', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return port;
}

function target(destination: string, port: number, expectedPort: number): ProbeTarget {
  return { family: 'ipv4', path: 'outbound', destination: parseIp(destination)!, port, expectedPort, via: 'lo' };
}

describe('the probe listener judges each arrival by its 4-tuple and nonces', () => {
  it('the probe socket itself arriving is interception, and certifies as a proof', async () => {
    const { listener, port, strangers } = await startListener();
    const probeTarget = target('127.0.0.1', port, port);
    const outcome = await attemptProbe(probeTarget, listener, 2000, new AbortController().signal);
    expect(outcome.kind).toBe('intercepted');
    if (outcome.kind !== 'intercepted') return;
    expect(outcome.arrival.remote).toEqual(outcome.source);
    expect(typeof certifyArrival(probeTarget, outcome, 1)).toBe('object');
    expect(strangers).toEqual([]);
  });

  it('a relay from another address carries our nonces but is reported as a relay, and the attempt is not intercepted', async () => {
    const { listener, port, strangers } = await startListener();
    const relayPort = await startRelay(port, '127.0.0.3');
    const outcome = await attemptProbe(
      target('127.0.0.2', relayPort, port),
      listener,
      2000,
      new AbortController().signal,
    );
    expect(outcome.kind).toBe('wrong-peer');
    // The listener reports before it drops the relayed connection, so the report precedes the outcome.
    expect(strangers).toHaveLength(1);
    expect(strangers[0]).toMatchObject({ listenerPort: port, relayed: true, remote: { address: '127.0.0.3' } });
    expect(strangers[0]?.sentence).toMatch(
      /^our probe's nonce arrived at the listener from 127\.0\.0\.3:\d+, not from the probe socket 127\.0\.0\.1:\d+/,
    );
  });

  it('our own address on another port (what a NAT port rewrite looks like) is neither proof nor stranger', async () => {
    const { listener, port, strangers } = await startListener();
    const relayPort = await startRelay(port, '127.0.0.1');
    const outcome = await attemptProbe(
      target('127.0.0.2', relayPort, port),
      listener,
      2000,
      new AbortController().signal,
    );
    expect(outcome).toMatchObject({
      kind: 'wrong-peer',
      detail: expect.stringMatching(
        /arrive from port \d+, not from its socket's port \d+ \(NAT rewrote it\); not counted as proof$/,
      ),
    });
    expect(strangers).toEqual([]);
  });

  it('a connection without our nonce is a stranger', async () => {
    const { port, strangers, firstStranger } = await startListener();
    const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.5' });
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) =>
      socket.on('connect', () => {
        socket.end('hello');
        resolve();
      }),
    );
    await firstStranger;
    expect(strangers).toHaveLength(1);
    expect(strangers[0]).toMatchObject({ relayed: false, remote: { address: '127.0.0.5' } });
    expect(strangers[0]?.sentence).toMatch(
      /^a connection from 127\.0\.0\.5:\d+ that is not our probe arrived at the listener port \d+$/,
    );
  });
});
