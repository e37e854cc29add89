import fastJsonPatch from 'fast-json-patch';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:tls';
import { Pod } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installPair, issueCertificate, makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';
import { get, patchOf, send, tlsConnect, type Review, type WebhookProcess } from './webhook-client.js';
import { startWebhook } from './webhook-process.js';

const IMAGE = 'registry.example/interlock:1.0.0';
const pods = meshPods();
let authority: Authority;
let webhook: WebhookProcess;
let seq = 0;

async function review(body: string | Buffer, port = webhook.port, ca = authority.ca): Promise<Review> {
  const reply = await send(port, ca, '/mutate', body);
  expect(reply.status).toBe(200);
  return JSON.parse(reply.body) as Review;
}

/** Writes part of a request and leaves it hanging; resolves with whatever the server answers before it closes. */
function slowRequest(port: number, ca: Buffer, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => socket.write(head));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  authority = makeAuthority('server');
  webhook = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'), [
    '--max-request-bytes',
    '65536',
    '--request-deadline',
    '300ms',
  ]);
});

afterAll(async () => {
  webhook.child.kill('SIGKILL');
  await webhook.exited;
  removeAuthority(authority);
});

describe('the meshes’ injected pods, as AdmissionReviews over real TLS', () => {
  it.each(pods.filter((p) => p.validator).map((p) => [p.id, p] as const))(
    '%s: patched once, then no more',
    async (_id, fixture) => {
      const uid = `uid-${++seq}`;
      const first = await review(admissionReview(fixture.pod, uid));
      expect(first.response).toMatchObject({ uid, allowed: true, patchType: 'JSONPatch' });
      const mutated = fastJsonPatch.applyPatch(
        structuredClone(fixture.pod),
        patchOf(first) as fastJsonPatch.Operation[],
        true,
        false,
      ).newDocument;
      new Pod(mutated as never).validate();
      const validator = (mutated.spec as { initContainers: { name: string; image: string }[] }).initContainers.find(
        (c) => c.name === fixture.validator,
      );
      expect(validator?.image).toBe(IMAGE);
      const again = await review(admissionReview(mutated, `${uid}-again`));
      expect(again.response).toEqual({ uid: `${uid}-again`, allowed: true });
    },
  );

  it.each(pods.filter((p) => !p.validator).map((p) => [p.id, p] as const))(
    '%s: no mesh validator, no patch',
    async (_id, fixture) => {
      const reply = await review(admissionReview(fixture.pod, 'uid-plain'));
      expect(reply.response).toEqual({ uid: 'uid-plain', allowed: true });
    },
  );

  it('mutates only a Pod CREATE: an UPDATE, another kind and a subresource are allowed unchanged', async () => {
    const pod = pods.find((p) => p.validator)!.pod;
    const cases = [
      { operation: 'UPDATE', oldObject: pod },
      { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } },
      { subResource: 'ephemeralcontainers' },
    ];
    for (const overrides of cases)
      expect((await review(admissionReview(pod, 'uid-other', overrides))).response).toEqual({
        uid: 'uid-other',
        allowed: true,
      });
  });
});

describe('bad input: a clear decision, never a crash, and the server stays up', () => {
  it('garbage and a wrong kind are admitted unchanged with a message naming the problem', async () => {
    const garbage = await review('\u0000{not json');
    expect(garbage.response).toMatchObject({ uid: '', allowed: true });
    expect(garbage.response.status?.message).toMatch(/not JSON.*admitted unchanged/);
    const wrongKind = await review(
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'u-beta' } }),
    );
    expect(wrongKind.response.status?.message).toMatch(/expected an AdmissionReview admission\.k8s\.io\/v1/);
    const cut = await review(
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-cut","object":{',
    );
    expect(cut.response).toMatchObject({ uid: 'u-cut', allowed: true });
  });

  it('a body over --max-request-bytes is answered without being read, uid kept', async () => {
    const huge = admissionReview({ metadata: { annotations: { big: 'x'.repeat(200_000) } } }, 'u-huge');
    const reply = await review(huge);
    expect(reply.response).toMatchObject({ uid: 'u-huge', allowed: true });
    expect(reply.response.status?.message).toMatch(/over 65536 bytes/);
  });

  it('a slow client gets the decision at the deadline, and the connection is closed', async () => {
    const head = `POST /mutate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\r\n{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-slow",`;
    const answer = await slowRequest(webhook.port, authority.ca, head);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toMatch(/"uid":"u-slow","allowed":true/);
    expect(answer).toMatch(/not complete within 300 ms/);
  });

  it('a client that never finishes its headers is cut off', async () => {
    const answer = await slowRequest(webhook.port, authority.ca, 'POST /mutate HTTP/1.1\r\nhost: x\r\n');
    expect(answer).toMatch(/^(HTTP\/1\.1 408|)/);
  });

  it('wrong method and path answer 405 and 404; health, readiness and metrics answer, metrics on their own port', async () => {
    expect((await send(webhook.port, authority.ca, '/mutate')).status).toBe(405);
    expect((await send(webhook.port, authority.ca, '/nope')).status).toBe(404);
    expect((await send(webhook.port, authority.ca, '/healthz')).body).toBe('ok\n');
    expect((await send(webhook.port, authority.ca, '/readyz')).status).toBe(200);
    expect((await send(webhook.port, authority.ca, '/metrics')).status).toBe(404);
    expect(webhook.metricsPort).not.toBe(webhook.port);
    expect((await get(webhook.metricsPort, '/healthz')).body).toBe('ok\n');
    expect((await get(webhook.metricsPort, '/readyz')).status).toBe(200);
    expect((await get(webhook.metricsPort, '/mutate')).status).toBe(404);
    const metrics = (await get(webhook.metricsPort, '/metrics')).body;
    expect(metrics).toMatch(/interlock_webhook_requests_total\{outcome="patched"\} [1-9]/);
    expect(metrics).toMatch(/interlock_webhook_errors_total\{cause="too-large"\} 1\b/);
    expect(metrics).toMatch(/interlock_webhook_errors_total\{cause="deadline"\} [1-9]/);
    expect(metrics).toMatch(/interlock_webhook_patches_total\{container="linkerd-network-validator"\} [1-9]/);
    expect(metrics).toMatch(/interlock_webhook_request_duration_seconds_count [1-9]/);
  });

  it('is still the same process, and still patches', async () => {
    expect(webhook.child.exitCode).toBeNull();
    const fixture = pods.find((p) => p.validator)!;
    expect((await review(admissionReview(fixture.pod, 'u-after'))).response.patchType).toBe('JSONPatch');
  });
});

/** A request with a client certificate (or none): resolves with the status, rejects on a refused handshake. */
function sendAs(port: number, body: string, client?: Pick<Authority, 'cert' | 'key'>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/mutate',
        method: 'POST',
        ca: authority.ca,
        agent: false,
        ...(client ? { cert: client.cert, key: client.key } : {}),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('--client-ca: only a caller with a certificate of that CA reaches /mutate', () => {
  it('the API server’s client certificate is answered; none, or one of another CA, fails the handshake', async () => {
    const apiServer = makeAuthority('api-server-client');
    const stranger = makeAuthority('stranger');
    const guarded = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'), [
      '--client-ca',
      join(apiServer.dir, 'ca.crt'),
    ]);
    try {
      const body = admissionReview(pods.find((p) => p.validator)!.pod, 'u-client');
      expect(await sendAs(guarded.port, body, apiServer)).toBe(200);
      await expect(sendAs(guarded.port, body)).rejects.toThrow();
      await expect(sendAs(guarded.port, body, stranger)).rejects.toThrow();
      // The kubelet and Prometheus present no certificate: their port does not ask for one.
      expect((await get(guarded.metricsPort, '/readyz')).status).toBe(200);
      expect(guarded.logs.find((entry) => entry.msg === 'webhook listening')?.clientAuth).toBe(true);
      expect(guarded.child.exitCode).toBeNull();
    } finally {
      guarded.child.kill('SIGKILL');
      await guarded.exited;
      removeAuthority(apiServer);
      removeAuthority(stranger);
    }
  });

  it('--client-name: of the CA’s certificates only those naming the API server (CN or DNS SAN) are answered', async () => {
    const clients = makeAuthority('front-proxy');
    const byCn = issueCertificate(clients, { commonName: 'kube-apiserver-webhook-client', altNames: [] });
    const bySan = issueCertificate(clients, { commonName: 'x', altNames: ['DNS:front-proxy-client'] });
    const sibling = issueCertificate(clients, { commonName: 'some-tenant', altNames: ['DNS:some-tenant.shop.svc'] });
    // A CN that only contains an allowed name, and a SAN entry a comma would split, match nothing.
    const lookalike = issueCertificate(clients, {
      commonName: 'kube-apiserver-webhook-client.evil',
      altNames: ['DNS:front-proxy-client.evil'],
    });
    const guarded = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'), [
      '--client-ca',
      join(clients.dir, 'ca.crt'),
      '--client-name',
      'kube-apiserver-webhook-client,front-proxy-client',
    ]);
    try {
      const body = admissionReview(pods.find((p) => p.validator)!.pod, 'u-named');
      expect(await sendAs(guarded.port, body, byCn)).toBe(200);
      expect(await sendAs(guarded.port, body, bySan)).toBe(200);
      await expect(sendAs(guarded.port, body, sibling)).rejects.toThrow();
      await expect(sendAs(guarded.port, body, lookalike)).rejects.toThrow();
      await expect(sendAs(guarded.port, body)).rejects.toThrow();
      expect(guarded.logs.find((entry) => entry.msg === 'webhook listening')?.clientNames).toEqual([
        'kube-apiserver-webhook-client',
        'front-proxy-client',
      ]);
      expect(guarded.logs.some((entry) => String(entry.msg).includes('names none of --client-name'))).toBe(true);
      expect(guarded.child.exitCode).toBeNull();
    } finally {
      guarded.child.kill('SIGKILL');
      await guarded.exited;
      removeAuthority(clients);
    }
  });

  it('--client-name without --client-ca stops the start (exit 64)', async () => {
    await expect(
      startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'), ['--client-name', 'kube-apiserver']),
    ).rejects.toThrow(/exited 64.*--client-name needs --client-ca/s);
  });

  it('a --client-ca file without a certificate stops the start, naming it (exit 66)', async () => {
    const bad = join(authority.dir, 'not-a-ca.pem');
    writeFileSync(bad, 'hello');
    await expect(
      startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'), ['--client-ca', bad]),
    ).rejects.toThrow(/exited 66.*--client-ca .*no PEM certificate/s);
  });
});

describe('--on-error deny', () => {
  it('denies what it cannot read, with the reason', async () => {
    const denying = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'), [
      '--on-error',
      'deny',
    ]);
    try {
      const reply = await review('garbage', denying.port);
      expect(reply.response.allowed).toBe(false);
      expect(reply.response.status?.message).toMatch(/denied \(--on-error deny\)/);
    } finally {
      denying.child.kill('SIGKILL');
      await denying.exited;
    }
  });
});

describe('certificate rotation', () => {
  it('serves the new pair without a restart; a client pinned to the new CA connects, the old CA no longer does', async () => {
    const first = makeAuthority('first');
    const second = makeAuthority('second');
    const dir = mkdtempSync(join(tmpdir(), 'interlock-webhook-mount-'));
    const paths = installPair(dir, first);
    const server = await startWebhook(paths.cert, paths.key);
    try {
      (await tlsConnect(server.port, first.ca)).destroy();
      await expect(tlsConnect(server.port, second.ca)).rejects.toThrow();
      // Half a rotation (a key that is not the certificate's): refused, the served pair stays.
      writeFileSync(paths.key, second.key);
      await sleep(300);
      (await tlsConnect(server.port, first.ca)).destroy();
      installPair(dir, second);
      let connected = false;
      for (let attempt = 0; attempt < 200 && !connected; attempt++) {
        connected = await tlsConnect(server.port, second.ca).then(
          (socket) => (socket.destroy(), true),
          () => false,
        );
        if (!connected) await sleep(100);
      }
      expect(connected).toBe(true);
      await expect(tlsConnect(server.port, first.ca)).rejects.toThrow();
      expect(server.child.exitCode).toBeNull();
      expect(server.logs.some((line) => line.msg === 'serving certificate reloaded')).toBe(true);
      expect(server.logs.some((line) => String(line.message).includes('not a usable pair'))).toBe(true);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
      for (const a of [first, second]) removeAuthority(a);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SIGTERM', () => {
  it('drains: an in-flight request still gets its answer, then the process exits 0', async () => {
    const server = await startWebhook(join(authority.dir, 'tls.crt'), join(authority.dir, 'tls.key'), [
      '--request-deadline',
      '4s',
    ]);
    const fixture = pods.find((p) => p.validator)!;
    const body = admissionReview(fixture.pod, 'u-drain');
    const half = Math.floor(body.length / 2);
    const socket = await tlsConnect(server.port, authority.ca);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      `POST /mutate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
    );
    await sleep(200);
    server.child.kill('SIGTERM');
    await sleep(200);
    await expect(tlsConnect(server.port, authority.ca)).rejects.toThrow();
    socket.end(body.slice(half));
    await closed;
    expect(answer).toMatch(/"uid":"u-drain","allowed":true,"patchType":"JSONPatch"/);
    expect(await server.exited).toBe(0);
  });
});
