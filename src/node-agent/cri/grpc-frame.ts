import { safeSentence } from '../../config/echo-value.js';
import { fail, ok, type Result } from '../../reason/result.js';

/** The largest answer the re-check accepts from the runtime: a verbose sandbox status is a few KiB. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** One uncompressed gRPC message: flag 0, big-endian length, the protobuf bytes. */
export function grpcFrame(message: Uint8Array): Uint8Array {
  const frame = new Uint8Array(5 + message.length);
  new DataView(frame.buffer).setUint32(1, message.length);
  frame.set(message, 5);
  return frame;
}

/**
 * The one message of a unary answer. Compressed frames (never asked for), a length past the cap,
 * a body of more or less than one whole frame: failures, so a stuck or hostile runtime is unknown.
 */
export function grpcMessage(body: Uint8Array, cap = MAX_MESSAGE_BYTES): Result<Uint8Array, 'RuntimeAnswerInvalid'> {
  if (body.length < 5) return fail('RuntimeAnswerInvalid', `a gRPC answer of ${body.length} bytes has no frame`);
  if (body[0] !== 0) return fail('RuntimeAnswerInvalid', 'a compressed gRPC frame, which was not asked for');
  const length = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(1);
  if (length > cap) return fail('RuntimeAnswerInvalid', `a gRPC message of ${length} bytes, over the ${cap}-byte cap`);
  if (body.length !== 5 + length)
    return fail('RuntimeAnswerInvalid', `a gRPC answer of ${body.length} bytes for a frame of ${length}`);
  return ok(body.subarray(5));
}

/**
 * The runtime's `grpc-message`, percent-encoded on the wire (gRPC over HTTP2, "Responses"). A
 * malformed encoding (`%zz`, a lone `%`, a cut UTF-8 sequence) is kept as sent, as the protocol
 * asks of a decoder, never thrown; control and bidirectional characters are escaped and the
 * text cut at 300 code points, since it goes into the agent's log lines and reasons.
 */
export function grpcStatusMessage(raw: string): string {
  let text = raw;
  try {
    text = decodeURIComponent(raw);
  } catch {
    // URIError: the raw form is the message.
  }
  return safeSentence(text);
}
