import { connect as http2Connect, constants, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { fail, type Result } from '../../reason/result.js';
import {
  decodeListPodSandbox,
  decodeStatusInfo,
  decodePodSandboxStatus,
  listPodSandboxRequest,
  podSandboxStatusRequest,
  statusRequest,
  type SandboxEntry,
  type SandboxStatus,
} from './cri-messages.js';
import { grpcFrame, grpcMessage, grpcStatusMessage, MAX_MESSAGE_BYTES } from './grpc-frame.js';

export type RuntimeFailure = 'RuntimeUnreachable' | 'RuntimeTimeout' | 'RuntimeError' | 'RuntimeAnswerInvalid';

/** The runtime, as the re-check needs it: a port, so the sweep is tested without a socket. */
export interface RuntimeClient {
  listSandboxes(uid: string, timeoutMs: number): Promise<Result<SandboxEntry[], RuntimeFailure>>;
  sandboxStatus(id: string, timeoutMs: number): Promise<Result<SandboxStatus, RuntimeFailure>>;
  close(): void;
}

/** The CNI audit's question: the verbose Status info map (containerd's cniconfig and last load). */
export interface RuntimeInfoClient {
  statusInfo(timeoutMs: number): Promise<Result<Map<string, string>, RuntimeFailure>>;
}

/**
 * gRPC over node:http2 on the runtime's unix socket: three unary calls, each with a deadline and a
 * size cap, on one session kept while it works and opened again after it fails (the runtime
 * restarted). No grpc-js at run time: see docs/node-agent.md for why.
 */
export function criClient(socketPath: string): RuntimeClient & RuntimeInfoClient {
  let session: ClientHttp2Session | undefined;
  const open = (): ClientHttp2Session => {
    if (session && !session.closed && !session.destroyed) return session;
    const opened = http2Connect('http://localhost', { createConnection: () => netConnect(socketPath) });
    opened.on('error', () => undefined);
    opened.unref();
    session = opened;
    return opened;
  };
  const unary = async (method: string, request: Uint8Array, timeoutMs: number) => {
    const answer = await call(open(), method, request, timeoutMs);
    if (!answer.ok && answer.error.reason !== 'RuntimeError') {
      session?.destroy();
      session = undefined;
    }
    return answer;
  };
  return {
    listSandboxes: async (uid, timeoutMs) => {
      const answer = await unary('ListPodSandbox', listPodSandboxRequest(uid), timeoutMs);
      return answer.ok ? decodeListPodSandbox(answer.value) : answer;
    },
    sandboxStatus: async (id, timeoutMs) => {
      const answer = await unary('PodSandboxStatus', podSandboxStatusRequest(id), timeoutMs);
      return answer.ok ? decodePodSandboxStatus(answer.value) : answer;
    },
    statusInfo: async (timeoutMs) => {
      const answer = await unary('Status', statusRequest(), timeoutMs);
      return answer.ok ? decodeStatusInfo(answer.value) : answer;
    },
    close: () => session?.close(),
  };
}

function call(
  session: ClientHttp2Session,
  method: string,
  request: Uint8Array,
  timeoutMs: number,
): Promise<Result<Uint8Array, RuntimeFailure>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let status: string | undefined;
    let message = '';
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: `/runtime.v1.RuntimeService/${method}`,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': `${Math.max(1, Math.ceil(timeoutMs))}m`,
    });
    const finish = (answer: Result<Uint8Array, RuntimeFailure>) => {
      clearTimeout(timer);
      stream.destroy();
      resolve(answer);
    };
    const timer = setTimeout(
      () => finish(fail('RuntimeTimeout', `CRI ${method} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const headers = (fields: Record<string, unknown>) => {
      if (typeof fields['grpc-status'] === 'string') status = fields['grpc-status'];
      if (typeof fields['grpc-message'] === 'string') message = grpcStatusMessage(fields['grpc-message']);
    };
    stream.on('response', headers);
    stream.on('trailers', headers);
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_MESSAGE_BYTES + 5)
        finish(fail('RuntimeAnswerInvalid', `CRI ${method} answered more than ${MAX_MESSAGE_BYTES} bytes`));
      else chunks.push(chunk);
    });
    stream.on('error', (error: Error) =>
      finish(fail('RuntimeUnreachable', `CRI ${method} on the runtime socket: ${error.message}`)),
    );
    stream.on('end', () => {
      if (status === undefined)
        finish(fail('RuntimeUnreachable', `CRI ${method}: the answer ended without a gRPC status`));
      else if (status !== '0') finish(fail('RuntimeError', `CRI ${method}: gRPC status ${status}: ${message}`));
      else {
        const body = grpcMessage(Buffer.concat(chunks));
        finish(body.ok ? body : fail('RuntimeAnswerInvalid', `CRI ${method}: ${body.error.message}`));
      }
    });
    stream.end(grpcFrame(request));
  });
}
