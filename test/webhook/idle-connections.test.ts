import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';
import { get, send, type WebhookProcess } from './webhook-client.js';
import { startWebhook } from './webhook-process.js';

/**
 * Peers that connect and never send a byte (issue: 170 of them made every valid admission fail,
 * 16 starved /healthz). All on loopback, bounded in count, closed after each test.
 */
let authority: Authority;
let webhook: WebhookProcess;
const held: Socket[] = [];

async function silent(port: number, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let index = 0; index < count; index++) {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.on('error', () => undefined);
    held.push(socket);
    sockets.push(socket);
    await Promise.race([once(socket, 'connect'), once(socket, 'close')]);
  }
  return sockets;
}

/** Resolves once every socket was closed by the server, or with how many were still open after `ms`. */
async function stillOpenAfter(sockets: readonly Socket[], ms: number): Promise<number> {
  const all = Promise.all(sockets.map((s) => (s.destroyed ? undefined : once(s, 'close'))));
  await Promise.race([all, new Promise((resolve) => setTimeout(resolve, ms))]);
  return sockets.filter((s) => !s.destroyed).length;
}

beforeAll(async () => {
  authority = makeAuthority('server');
  webhook = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'));
});

afterAll(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  webhook.child.kill('SIGKILL');
  await webhook.exited;
  removeAuthority(authority);
});

describe('idle connections hold no door', () => {
  it('200 silent connections to the admission port: a valid admission is still answered', async () => {
    const sockets = await silent(webhook.port, 200);
    const fixture = meshPods().find((pod) => pod.validator)!;
    const reply = await send(webhook.port, authority.ca, '/mutate', admissionReview(fixture.pod, 'uid-idle'));
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ response: { uid: 'uid-idle', allowed: true } });
    // Each silent peer is closed well before the 10 s TLS handshake timeout that used to hold it.
    expect(await stillOpenAfter(sockets, 5000)).toBe(0);
  });

  it('40 silent connections to the metrics port: the probes still get /healthz and /readyz', async () => {
    const sockets = await silent(webhook.metricsPort, 40);
    expect((await get(webhook.metricsPort, '/healthz')).body).toBe('ok\n');
    expect((await get(webhook.metricsPort, '/readyz')).status).toBe(200);
    expect(await stillOpenAfter(sockets, 5000)).toBe(0);
  });
});
