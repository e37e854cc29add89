import { createServer, type Http2Server } from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { criClient } from '../../../src/node-agent/cri/cri-client.js';

// Issue 43 item 7: the runtime's `grpc-message` trailer is percent-encoded (gRPC over HTTP2,
// "Responses"); a malformed one must not throw a URIError out of the CRI client's event handler,
// which would crash the node agent. The fake runtime speaks the real wire format: HTTP/2 on a
// unix socket, `application/grpc`, the status and message in trailers.
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

async function runtimeAnswering(message: string, where: 'trailers' | 'headers'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-cri-'));
  const socket = join(dir, 'cri.sock');
  const server: Http2Server = createServer();
  server.on('stream', (stream) => {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      if (where === 'headers') {
        // Trailers-only: the status in the one HEADERS frame, as grpc-go answers an error.
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '13', 'grpc-message': message },
          { endStream: true },
        );
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '13', 'grpc-message': message }));
      stream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  cleanups.push(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return socket;
}

describe('the CRI client reads the runtime grpc-message', () => {
  for (const where of ['trailers', 'headers'] as const) {
    it(`malformed percent-encoding in ${where} (%zz, a lone %, a cut UTF-8 sequence): a RuntimeError, no throw`, async () => {
      for (const raw of ['bad %zz here', 'ends with %', 'half %E2%82']) {
        const client = criClient(await runtimeAnswering(raw, where));
        cleanups.push(() => client.close());
        const answer = await client.listSandboxes('uid-1', 2000);
        expect(answer.ok).toBe(false);
        if (!answer.ok) {
          expect(answer.error.reason).toBe('RuntimeError');
          expect(answer.error.message).toBe(`CRI ListPodSandbox: gRPC status 13: ${raw}`);
        }
      }
    });
  }

  it('well-formed percent-encoding is decoded', async () => {
    const client = criClient(await runtimeAnswering('sandbox %22x%22 not found: 100%25', 'trailers'));
    cleanups.push(() => client.close());
    const answer = await client.listSandboxes('uid-1', 2000);
    expect(answer.ok ? '' : answer.error.message).toBe(
      'CRI ListPodSandbox: gRPC status 13: sandbox "x" not found: 100%',
    );
  });

  it('control characters a runtime sends are escaped, the text cut at 300 code points', async () => {
    const client = criClient(await runtimeAnswering('a%0Ab%1B[31mc', 'trailers'));
    cleanups.push(() => client.close());
    const answer = await client.listSandboxes('uid-1', 2000);
    expect(answer.ok ? '' : answer.error.message).toBe('CRI ListPodSandbox: gRPC status 13: a\\u{a}b\\u{1b}[31mc');
  });
});

it('a grpc-message of 10,000 characters is cut', async () => {
  const client = criClient(await runtimeAnswering('x'.repeat(10_000), 'trailers'));
  cleanups.push(() => client.close());
  const answer = await client.listSandboxes('uid-1', 2000);
  expect(answer.ok ? '' : answer.error.message).toBe(`CRI ListPodSandbox: gRPC status 13: ${'x'.repeat(300)}…`);
});
