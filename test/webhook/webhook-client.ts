import { spawn, type ChildProcess } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { request } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';

export interface WebhookProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** The plain-HTTP port of /metrics, /healthz and /readyz (--metrics-bind). */
  readonly metricsPort: number;
  readonly logs: Record<string, unknown>[];
  readonly exited: Promise<number | null>;
  stderr(): string;
}

/** `interlock webhook` launched by `launch` (node and its flags), on 127.0.0.1 and a free port. */
export async function spawnWebhook(
  launch: readonly string[],
  cert: string,
  key: string,
  extra: readonly string[] = [],
  env: Record<string, string> = {},
  /** null: no --image (the webhook then injects its own pod's image). */
  image: string | null = 'registry.example/interlock:1.0.0',
): Promise<WebhookProcess> {
  const [node, ...flags] = launch;
  const child = spawn(
    node!,
    [
      ...flags,
      'webhook',
      '--bind',
      '127.0.0.1:0',
      '--metrics-bind',
      '127.0.0.1:0',
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      ...(image === null ? [] : ['--image', image]),
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } },
  );
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  let pending = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const { port, metricsPort } = await new Promise<{ port: number; metricsPort: number }>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'webhook listening')
          resolve({ port: entry.port as number, metricsPort: entry.metricsPort as number });
      }
    });
    void exited.then((code) => reject(new Error(`webhook exited ${code}: ${stderr}`)));
  });
  return { child, port, metricsPort, logs, exited, stderr: () => stderr };
}

export interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, unknown>;
}

/** One HTTPS request that trusts only `ca` (the API server's caBundle) and checks the name 127.0.0.1. */
export function send(
  port: number,
  ca: Buffer,
  path: string,
  body?: string | Buffer,
  method = body ? 'POST' : 'GET',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        ca,
        agent: false,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A TLS connection pinned to `ca`: resolves once the handshake verified the server, rejects otherwise. */
export function tlsConnect(port: number, ca: Buffer): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => resolve(socket));
    socket.on('error', reject);
  });
}

export interface Review {
  response: {
    uid: string;
    allowed: boolean;
    patchType?: string;
    patch?: string;
    status?: { message: string };
    warnings?: string[];
  };
}

export function patchOf(review: Review): unknown[] {
  return review.response.patch
    ? (JSON.parse(Buffer.from(review.response.patch, 'base64').toString('utf8')) as unknown[])
    : [];
}

/**
 * An AdmissionReview request that sends its headers and half its body, then waits: everything
 * the server wrote before it closed the connection (a reset ends it too; the caller judges what
 * arrived).
 */
export function halfSentReview(port: number, ca: Buffer, uid: string): Promise<string> {
  return new Promise((resolve) => {
    const head = `POST /mutate HTTP/1.1\r\nhost: x\r\ncontent-length: 4000\r\n\r\n{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}",`;
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => socket.write(head));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => undefined);
  });
}

/** A plain-HTTP GET on 127.0.0.1 (the metrics port). */
export function get(port: number, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    }).on('error', reject);
  });
}
