import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverCluster } from '../../src/kube/discover-cluster.js';
import { buildFailureEvent, firstSentence } from '../../src/kube/pod-event.js';
import { reasonHeadline } from '../../src/reason/guide.js';
import { postEvent } from '../../src/kube/post-event.js';
import { kubeRequest } from '../../src/kube/request.js';
import type { ClusterAccess } from '../../src/kube/cluster-access.js';

const dir = mkdtempSync(join(tmpdir(), 'interlock-kube-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

describe('discoverCluster', () => {
  it('reads the current context of KUBECONFIG: server, CA file relative to the file, token, namespace', () => {
    writeFileSync(join(dir, 'ca.pem'), 'CA-BYTES');
    const path = kubeconfig(
      'a.yaml',
      `apiVersion: v1
kind: Config
current-context: two
clusters:
- name: c1
  cluster: { server: "https://one.example:6443/" }
- name: c2
  cluster: { server: "https://two.example:6443", certificate-authority: ca.pem, tls-server-name: api }
users:
- name: u2
  user: { token: secret-token }
contexts:
- name: one
  context: { cluster: c1, user: u2 }
- name: two
  context: { cluster: c2, user: u2, namespace: shop }
`,
    );
    const access = discoverCluster({ KUBECONFIG: path }, join(dir, 'absent'));
    expect(access.ok && access.value).toMatchObject({
      server: 'https://two.example:6443',
      token: 'secret-token',
      namespace: 'shop',
      tlsServerName: 'api',
      insecureSkipTlsVerify: false,
    });
    expect(access.ok && access.value.caData?.toString()).toBe('CA-BYTES');
  });

  it('merges a KUBECONFIG list: the first file that sets current-context or a name wins; missing files are skipped', () => {
    const first = kubeconfig(
      'b1.yaml',
      'current-context: x\nclusters:\n- name: c\n  cluster: { server: "http://first:1", certificate-authority-data: "QUJD" }\n',
    );
    const second = kubeconfig(
      'b2.yaml',
      'current-context: y\nclusters:\n- name: c\n  cluster: { server: "http://second:1" }\ncontexts:\n- name: x\n  context: { cluster: c }\n',
    );
    const access = discoverCluster({ KUBECONFIG: [join(dir, 'nope.yaml'), first, second].join(':') });
    expect(access.ok && access.value.server).toBe('http://first:1');
    expect(access.ok && access.value.caData?.toString()).toBe('ABC');
  });

  it('refuses exec plugins and names a current-context that does not exist', () => {
    const exec = kubeconfig(
      'c.yaml',
      'current-context: x\nclusters: [{name: c, cluster: {server: "https://s"}}]\nusers: [{name: u, user: {exec: {command: aws}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n',
    );
    const refused = discoverCluster({ KUBECONFIG: exec });
    expect(!refused.ok && refused.error).toMatchObject({ reason: 'KubeUnavailable' });
    expect(!refused.ok && refused.error.message).toMatch(/exec or auth-provider/);
    const missing = kubeconfig('d.yaml', 'current-context: gone\n');
    const none = discoverCluster({ KUBECONFIG: missing });
    expect(!none.ok && none.error.message).toMatch(/current-context "gone" is not defined/);
  });

  it('falls back to the in-cluster service account, bracketing an IPv6 service host', () => {
    const sa = join(dir, 'sa');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'sa-token\n');
    writeFileSync(join(sa, 'ca.crt'), 'SA-CA');
    writeFileSync(join(sa, 'namespace'), 'payments');
    const access = discoverCluster({ KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBERNETES_SERVICE_PORT: '443' }, sa);
    expect(access.ok && access.value).toMatchObject({
      server: 'https://[fd00:10:96::1]:443',
      token: 'sa-token',
      namespace: 'payments',
    });
    const outside = discoverCluster({}, sa);
    expect(outside.ok).toBe(false);
  });
});

describe('kubeRequest and postEvent against a loopback server', () => {
  const seen: Array<{ method?: string; url?: string; auth?: string; body: string }> = [];
  let answer: (res: http.ServerResponse) => void = (res) => res.end();
  let server: http.Server;
  let access: ClusterAccess;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body });
        answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    access = {
      server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: 'tok',
      insecureSkipTlsVerify: false,
      origin: 'test',
    };
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const event = buildFailureEvent({
    pod: { name: 'web-1', namespace: 'shop', uid: '1111-2222' },
    reason: 'InterceptionMissing',
    terminationMessage:
      'InterceptionMissing: IPv4 connection to 192.0.2.1:20001 was not redirected to port 4140. It left the pod.\nconfig: mesh=linkerd',
    instance: 'node-a',
    now: new Date('2026-11-22T03:00:00.123Z'),
  });

  it('posts the Event with the bearer token and reports a 201 as success', async () => {
    answer = (res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{}');
    };
    const posted = await postEvent(access, event, 1000);
    expect(posted).toEqual({ ok: true, value: { name: event.metadata.name, count: 1 } });
    const last = seen.at(-1);
    expect(last).toMatchObject({ method: 'POST', url: '/api/v1/namespaces/shop/events', auth: 'Bearer tok' });
    expect(JSON.parse(last?.body ?? '{}')).toMatchObject({
      reason: 'InterceptionMissing',
      type: 'Warning',
      involvedObject: { uid: '1111-2222', kind: 'Pod' },
    });
  });

  it('an Event that exists already (the same pod failing again) is counted up, not duplicated', async () => {
    const before = seen.length;
    answer = (res) => {
      const last = seen.at(-1);
      if (last?.method === 'POST') {
        res.writeHead(409, { 'content-type': 'application/json' });
        res.end('{"kind":"Status","reason":"AlreadyExists"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...event, count: 4 }));
    };
    const posted = await postEvent(access, event, 1000);
    expect(posted).toEqual({ ok: true, value: { name: event.metadata.name, count: 5 } });
    expect(seen.slice(before).map((request) => `${request.method} ${request.url}`)).toEqual([
      'POST /api/v1/namespaces/shop/events',
      `GET /api/v1/namespaces/shop/events/${event.metadata.name}`,
      `PATCH /api/v1/namespaces/shop/events/${event.metadata.name}`,
    ]);
    expect(JSON.parse(seen.at(-1)?.body ?? '{}')).toEqual({
      count: 5,
      lastTimestamp: event.lastTimestamp,
      message: event.message,
    });
  });

  it('the name is one per pod uid and reason', () => {
    const again = buildFailureEvent({
      pod: { name: 'web-1', namespace: 'shop', uid: '1111-2222' },
      reason: 'InterceptionMissing',
      terminationMessage: 'x',
      instance: 'n',
      now: new Date(),
    });
    const recreated = buildFailureEvent({
      pod: { name: 'web-1', namespace: 'shop', uid: '3333' },
      reason: 'InterceptionMissing',
      terminationMessage: 'x',
      instance: 'n',
      now: new Date(),
    });
    const otherReason = buildFailureEvent({
      pod: { name: 'web-1', namespace: 'shop', uid: '1111-2222' },
      reason: 'PodNetworkMissing',
      terminationMessage: 'x',
      instance: 'n',
      now: new Date(),
    });
    expect(again.metadata.name).toBe(event.metadata.name);
    expect(new Set([event.metadata.name, recreated.metadata.name, otherReason.metadata.name]).size).toBe(3);
    expect(event.metadata.name).toMatch(/^web-1\.[0-9a-f]{16}$/);
  });

  it('a 403 is a KubeApiError carrying the API status message', async () => {
    answer = (res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ kind: 'Status', message: 'events is forbidden: User "x" cannot create resource "events"' }),
      );
    };
    const posted = await postEvent(access, event, 1000);
    expect(!posted.ok && posted.error.message).toMatch(/answered 403: events is forbidden/);
  });

  it('a server that never answers is cut off at the hard timeout', async () => {
    answer = () => undefined;
    const result = await kubeRequest(access, { method: 'GET', path: '/api', timeoutMs: 200 });
    expect(!result.ok && result.error).toMatchObject({ reason: 'KubeApiError' });
    expect(!result.ok && result.error.message).toMatch(/no complete answer within 200 ms/);
  });
});

describe('the Event message', () => {
  it('is the first sentence without the reason prefix; dots in addresses do not end it', () => {
    expect(
      firstSentence(
        'InterceptionMissing: IPv4 connection to 192.0.2.1:20001 was not redirected. It left.\nmore',
        'InterceptionMissing',
      ),
    ).toBe('IPv4 connection to 192.0.2.1:20001 was not redirected.');
    expect(firstSentence('PodNetworkMissing: no IPv4 address on eth0\nevidence', 'PodNetworkMissing')).toBe(
      'no IPv4 address on eth0',
    );
    expect(firstSentence('x'.repeat(5000), 'R')).toHaveLength(1024);
  });

  it("skips Interlock's headline line: the Event says the sentence that names the address", () => {
    const message = `${reasonHeadline('InterceptionMissing')}\nIPv4 connection to 192.0.2.1:20001 was not redirected to port 4140: refused\nconfig: mesh=linkerd\n`;
    expect(firstSentence(message, 'InterceptionMissing')).toBe(
      'IPv4 connection to 192.0.2.1:20001 was not redirected to port 4140: refused',
    );
    // Someone else's first line that only starts with the reason is still read as the sentence.
    expect(firstSentence('InterceptionMissing: something else\nmore', 'InterceptionMissing')).toBe('something else');
  });
});

describe('request bodies', () => {
  it('a DELETE with DeleteOptions arrives whole, sized by content-length', async () => {
    const bodies: string[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        bodies.push(`${req.method} ${req.headers['content-length']} ${body}`);
        res.writeHead(200);
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const access: ClusterAccess = {
      server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      insecureSkipTlsVerify: false,
      origin: 'test',
    };
    const options = { kind: 'DeleteOptions', preconditions: { uid: 'ü-1' } };
    const answer = await kubeRequest(access, {
      method: 'DELETE',
      path: '/api/v1/namespaces/a/pods/b',
      body: options,
      timeoutMs: 2000,
    });
    server.closeAllConnections();
    server.close();
    expect(answer.ok && answer.value.status).toBe(200);
    expect(bodies).toEqual([`DELETE ${Buffer.byteLength(JSON.stringify(options))} ${JSON.stringify(options)}`]);
  });
});
