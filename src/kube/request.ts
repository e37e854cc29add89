import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { fail, ok, type Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';

export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  readonly method: KubeMethod;
  /** `/api/v1/namespaces/default/events`, without the query. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as JSON unless `contentType` says otherwise (a merge patch, for instance). */
  readonly body?: unknown;
  readonly contentType?: string;
  /** Hard limit for the whole exchange, connect to last byte; the request is destroyed after it. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface KubeResponse {
  readonly status: number;
  /** Parsed JSON, or undefined when the body is empty or not JSON (`text` keeps it). */
  readonly body: unknown;
  readonly text: string;
}

/** Bodies past this are cut off and the exchange fails: an answer never exhausts the pod's memory. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * One request to the API server. Every HTTP answer is `ok` with its status (the caller decides
 * what a 403, 404 or 409 means); a transport failure, a timeout or an abort is a `KubeApiError`
 * naming the method, path and cause.
 */
export function kubeRequest(
  access: ClusterAccess,
  request: KubeRequest,
): Promise<Result<KubeResponse, 'KubeApiError'>> {
  return new Promise((resolve) => {
    const what = `${request.method} ${request.path}`;
    const opened = openKubeRequest(access, request, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) opened.destroy(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(ok({ status: response.statusCode ?? 0, body: parseJson(text), text }));
      });
      response.on('error', () => undefined);
    });
    const timer = setTimeout(
      () => opened.destroy(new Error(`no complete answer within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    opened.on('error', (error) => {
      clearTimeout(timer);
      resolve(fail('KubeApiError', `${what} to ${access.server} failed: ${describeError(error)}`));
    });
    opened.end(request.body === undefined ? undefined : encodeBody(request));
  });
}

/**
 * The request without reading its answer, for streams (watch): the caller owns the response and
 * any timeout. Authentication, TLS and the abort signal are applied as for `kubeRequest`.
 */
export function openKubeRequest(
  access: ClusterAccess,
  request: Omit<KubeRequest, 'timeoutMs'>,
  onResponse: (response: IncomingMessage) => void,
): http.ClientRequest {
  const url = new URL(request.path, `${access.server}/`);
  for (const [key, value] of Object.entries(request.query ?? {})) url.searchParams.set(key, value);
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'interlock' };
  if (access.token) headers.authorization = `Bearer ${access.token}`;
  if (request.body !== undefined) {
    headers['content-type'] = request.contentType ?? 'application/json';
    // node:http neither chunks nor sizes a DELETE body by itself; without this the server reads it as the next request.
    headers['content-length'] = String(Buffer.byteLength(encodeBody(request)));
  }
  const options: https.RequestOptions = {
    method: request.method,
    headers,
    agent: false,
    ...(request.signal ? { signal: request.signal } : {}),
  };
  if (url.protocol === 'https:') {
    Object.assign(options, {
      ...(access.caData ? { ca: access.caData } : {}),
      ...(access.clientCertData ? { cert: access.clientCertData } : {}),
      ...(access.clientKeyData ? { key: access.clientKeyData } : {}),
      ...(access.tlsServerName ? { servername: access.tlsServerName } : {}),
      rejectUnauthorized: !access.insecureSkipTlsVerify,
    });
    return https.request(url, options, onResponse);
  }
  return http.request(url, options, onResponse);
}

/** The body exactly as `openKubeRequest` sized it; a caller of `openKubeRequest` ends the request with it. */
function encodeBody(request: Pick<KubeRequest, 'body' | 'contentType'>): string {
  return typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
}
