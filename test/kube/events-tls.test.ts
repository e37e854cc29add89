import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverCluster } from '../../src/kube/discover-cluster.js';
import { kubeRequest } from '../../src/kube/request.js';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';

/**
 * The in-cluster path over real TLS: the API server's certificate must chain to the service
 * account's CA, or the token is never sent.
 */
const dir = mkdtempSync(join(tmpdir(), 'interlock-tls-'));
const seen: Array<string | undefined> = [];
let server: https.Server;
let port = 0;
let cluster: Authority;
let impostor: Authority;

beforeAll(async () => {
  const apiServer = { commonName: 'kubernetes', altNames: ['IP:127.0.0.1', 'DNS:kubernetes.default.svc'] };
  cluster = makeAuthority('cluster', apiServer);
  impostor = makeAuthority('impostor', apiServer);
  server = https.createServer({ key: cluster.key, cert: cluster.cert }, (req, res) => {
    seen.push(req.headers.authorization);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"kind":"APIVersions","versions":["v1"]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
  for (const authority of [cluster, impostor]) removeAuthority(authority);
});

function serviceAccount(authority: Authority): string {
  const sa = mkdtempSync(join(dir, 'sa-'));
  writeFileSync(join(sa, 'token'), 'sa-token');
  writeFileSync(join(sa, 'ca.crt'), authority.ca);
  return sa;
}

describe('in-cluster over TLS', () => {
  it("talks to a server whose certificate chains to the service account's CA, with the token", async () => {
    const access = discoverCluster(
      { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port) },
      serviceAccount(cluster),
    );
    expect(access.ok).toBe(true);
    if (!access.ok) return;
    const answer = await kubeRequest(access.value, { method: 'GET', path: '/api', timeoutMs: 5000 });
    expect(answer.ok && answer.value.status).toBe(200);
    expect(seen.at(-1)).toBe('Bearer sa-token');
  });

  it('refuses a server whose certificate another CA signed, and never sends it the token', async () => {
    const before = seen.length;
    const access = discoverCluster(
      { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port) },
      serviceAccount(impostor),
    );
    if (!access.ok) throw new Error(access.error.message);
    const answer = await kubeRequest(access.value, { method: 'GET', path: '/api', timeoutMs: 5000 });
    expect(answer.ok).toBe(false);
    expect(!answer.ok && answer.error.message).toMatch(/certificate/i);
    expect(seen.length).toBe(before);
  });

  it('a kubeconfig with client certificate data and insecure-skip-tls-verify reaches it; without the skip and the CA it is refused', async () => {
    const cert = cluster.cert.toString('base64');
    const key = cluster.key.toString('base64');
    const config = (skip: boolean) =>
      `current-context: c\nclusters: [{name: k, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: ${skip}}}]\nusers: [{name: u, user: {client-certificate-data: ${cert}, client-key-data: ${key}}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n`;
    writeFileSync(join(dir, 'skip.yaml'), config(true));
    writeFileSync(join(dir, 'strict.yaml'), config(false));
    const skip = discoverCluster({ KUBECONFIG: join(dir, 'skip.yaml') });
    const strict = discoverCluster({ KUBECONFIG: join(dir, 'strict.yaml') });
    if (!skip.ok || !strict.ok) throw new Error('kubeconfig not read');
    expect((await kubeRequest(skip.value, { method: 'GET', path: '/api', timeoutMs: 5000 })).ok).toBe(true);
    expect((await kubeRequest(strict.value, { method: 'GET', path: '/api', timeoutMs: 5000 })).ok).toBe(false);
  });
});
