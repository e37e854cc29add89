import type { Socket } from 'node:net';

export type BoundedRead =
  | { readonly kind: 'complete'; readonly bytes: Buffer }
  | { readonly kind: 'closed'; readonly bytes: Buffer }
  | { readonly kind: 'overflow'; readonly bytes: Buffer }
  | { readonly kind: 'timeout'; readonly bytes: Buffer }
  | { readonly kind: 'error'; readonly code: string; readonly bytes: Buffer };

/**
 * Reads exactly `length` bytes or gives up: never buffers more than `length` + one chunk, never
 * waits past `timeoutMs`. A peer that sends more than a message is reported, not trusted.
 */
export function readExactly(socket: Socket, length: number, timeoutMs: number): Promise<BoundedRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (result: BoundedRead): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
      resolve(result);
    };
    const collected = (): Buffer => Buffer.concat(chunks);
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      received += chunk.length;
      if (received > length) finish({ kind: 'overflow', bytes: collected().subarray(0, length) });
      else if (received === length) finish({ kind: 'complete', bytes: collected() });
    };
    const onEnd = (): void => finish({ kind: 'closed', bytes: collected() });
    const onError = (error: NodeJS.ErrnoException): void =>
      finish({ kind: 'error', code: error.code ?? 'EIO', bytes: collected() });
    const timer = setTimeout(() => finish({ kind: 'timeout', bytes: collected() }), Math.max(1, timeoutMs));
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.once('error', onError);
  });
}
