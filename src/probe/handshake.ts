import { randomBytes } from 'node:crypto';

/**
 * The probe's wire format: the client sends MAGIC + a fresh client nonce; only our own listener
 * knows the matching server nonce and sends MAGIC + it back. A proxy, a sink or any other peer
 * that echoes, or answers at all, cannot produce it.
 */
const MAGIC = Buffer.from('ILK1', 'ascii');
const NONCE_BYTES = 32;
export const MESSAGE_BYTES = MAGIC.length + NONCE_BYTES;

export interface Handshake {
  readonly clientNonce: Buffer;
  readonly serverNonce: Buffer;
}

export function newHandshake(): Handshake {
  return { clientNonce: randomBytes(NONCE_BYTES), serverNonce: randomBytes(NONCE_BYTES) };
}

export function encode(nonce: Buffer): Buffer {
  return Buffer.concat([MAGIC, nonce]);
}

/** The nonce in a complete message, or undefined when the bytes are not ours. */
export function decode(message: Buffer): Buffer | undefined {
  if (message.length !== MESSAGE_BYTES || !message.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  return message.subarray(MAGIC.length);
}
