import { createServer, type Http2Server } from 'node:http2';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { grpcFrame } from '../../src/node-agent/cri/grpc-frame.js';
import { concat, lengthField } from '../../src/node-agent/cri/protobuf.js';

/**
 * A runtime that answers only the CRI `Status` call, with the info map it is given: the wire
 * format of the real ones (HTTP/2 on a unix socket, one gRPC frame of a StatusResponse whose
 * field 2 is the map, the status in trailers). For answers no runtime here can give: CRI-O's
 * (none runs on this machine), and containerd's recorded answers placed where a test wants them.
 * `undefined`: no RuntimeService at all, as containerd answers with its CRI plugin disabled (Docker's).
 */
export async function fakeCriStatus(
  socket: string,
  info: Readonly<Record<string, string>> | undefined,
): Promise<Http2Server> {
  const entries = Object.entries(info ?? {}).map(([key, value]) =>
    lengthField(2, concat([lengthField(1, key), lengthField(2, value)])),
  );
  const answer = grpcFrame(concat(entries));
  const server = createServer();
  server.on('stream', (stream, headers) => {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      const known = info !== undefined && headers[':path'] === '/runtime.v1.RuntimeService/Status';
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () =>
        stream.sendTrailers(
          known
            ? { 'grpc-status': '0' }
            : { 'grpc-status': '12', 'grpc-message': 'unknown service runtime.v1.RuntimeService' },
        ),
      );
      stream.end(known ? answer : undefined);
    });
  });
  await mkdir(dirname(socket), { recursive: true });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return server;
}
