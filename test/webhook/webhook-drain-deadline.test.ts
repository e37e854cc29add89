import { connect as tcp, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gcStormFlags, startBusyLoops, steppedClock, untilOrExit } from '../harness/starvation.js';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { launchArgs } from '../harness/pod-namespace.js';
import { halfSentReview, spawnWebhook, type WebhookProcess } from './webhook-client.js';
import { startWebhook } from './webhook-process.js';

// The webhook's stop deadline: on SIGTERM it answers what is in flight for at most
// --drain-timeout, then closes every connection and exits 0. Two clients that would hold a naive
// drain: a request still sending its body (its own deadline is later), and a connection stalled
// before its TLS handshake (not yet an HTTP connection, so not among the server's connections).
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const FLAGS = ['--drain-timeout', '1s', '--request-deadline', '4s', '--log-level', 'debug'];

/** The shipped start-up snapshot, or with `gc` the npm bin under a collection every 10 ms. */
async function webhookToStop(
  env: Record<string, string> = {},
  gc = false,
): Promise<{ webhook: WebhookProcess; authority: Authority }> {
  const authority = makeAuthority(`drain-${process.pid}`);
  cleanups.push(() => removeAuthority(authority));
  const [cert, key] = [join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key')];
  const storm = gcStormFlags();
  cleanups.push(storm.remove);
  const [node, ...bin] = launchArgs('modules');
  const webhook = gc
    ? await spawnWebhook([node!, ...storm.flags, ...bin], cert, key, FLAGS, env)
    : await startWebhook(cert, key, FLAGS, env);
  cleanups.push(() => webhook.child.kill('SIGKILL'));
  // A webhook still running long after its drain deadline is hung: killed, so the test fails.
  const guard = setTimeout(() => webhook.child.kill('SIGKILL'), 60_000);
  void webhook.exited.then(() => clearTimeout(guard));
  return { webhook, authority };
}

/**
 * A TCP connection that starts its TLS handshake and stalls in it: a starved or broken client. It
 * sends the first bytes of a ClientHello record, so the first-byte guard (which closes silent
 * peers after a second) leaves it to the drain.
 */
async function stalledHandshake(webhook: WebhookProcess): Promise<Socket> {
  const socket = tcp(webhook.port, '127.0.0.1');
  socket.on('error', () => undefined);
  cleanups.push(() => socket.destroy());
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(Buffer.from([0x16, 0x03, 0x01]));
  return socket;
}

const handshakeTimedOut = (webhook: WebhookProcess) =>
  webhook.logs.some((line) => line.msg === 'TLS handshake failed' && /timeout/i.test(String(line.err)));

/** SIGTERM with both clients holding on; `meanwhile` runs once the drain has started. */
async function stopWhileHeld(webhook: WebhookProcess, authority: Authority, meanwhile: () => void) {
  const answer = halfSentReview(webhook.port, authority.ca, 'u-drain');
  await stalledHandshake(webhook);
  await new Promise((resolve) => setTimeout(resolve, 500));
  webhook.child.kill('SIGTERM');
  await untilOrExit(webhook.child, 'the drain', () => webhook.logs.some((line) => line.msg === 'draining'));
  meanwhile();
  const code = await webhook.exited;
  return { code, answer: await answer, drained: webhook.logs.find((line) => line.msg === 'drained') };
}

describe('the webhook keeps its drain deadline', () => {
  it('with the wall clock stepped back an hour mid-drain: both clients cut off at the deadline, exit 0', async () => {
    const clock = steppedClock();
    cleanups.push(clock.remove);
    const { webhook, authority } = await webhookToStop(clock.env);
    const stopped = await stopWhileHeld(webhook, authority, () => clock.step('-3600'));
    expect(stopped.code).toBe(0);
    // Cut off by the drain deadline (1 s), not answered at the request's (4 s) ...
    expect(stopped.answer).toBe('');
    // ... and the stalled connection closed by the drain, not by its 10 s handshake timeout.
    expect(stopped.drained?.connectionsCutOff).toBeGreaterThanOrEqual(2);
    expect(handshakeTimedOut(webhook)).toBe(false);
  }, 90_000);
});

describe('the webhook under forced garbage collection (the npm bin)', () => {
  it('a collection every 10 ms loses neither the stop signal nor the drain deadline', async () => {
    const { webhook, authority } = await webhookToStop({}, true);
    const stopped = await stopWhileHeld(webhook, authority, () => undefined);
    expect(stopped.code).toBe(0);
    expect(stopped.answer).toBe('');
    expect(handshakeTimedOut(webhook)).toBe(false);
  }, 90_000);
});

describe('the webhook under starvation (busy loops in their own sessions)', () => {
  it('SIGTERM with a request in flight and a stalled handshake: cut off at the drain deadline, exit 0', async () => {
    const { webhook, authority } = await webhookToStop();
    const loops = startBusyLoops();
    cleanups.push(loops.stop);
    const stopped = await stopWhileHeld(webhook, authority, () => undefined);
    loops.stop();
    expect(stopped.code).toBe(0);
    expect(stopped.answer).toBe('');
    expect(stopped.drained?.connectionsCutOff).toBeGreaterThanOrEqual(2);
    expect(handshakeTimedOut(webhook)).toBe(false);
  }, 120_000);
});
