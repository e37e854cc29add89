import { fail, ok, type Result } from '../../reason/result.js';

/**
 * The smallest protobuf wire codec the CRI calls need (varints, length-delimited fields, fixed
 * 32/64 skipped): a parser of bytes another process sends, so every read is bounded and every
 * malformed input is a failure, never an exception or a loop.
 */
export type WireValue =
  | { readonly field: number; readonly wire: 0; readonly value: bigint }
  | { readonly field: number; readonly wire: 2; readonly value: Uint8Array }
  | { readonly field: number; readonly wire: 1 | 5; readonly value: undefined };

/** Fields one message may hold: a ListPodSandbox answer of 110 pods has 110; a hostile one is refused. */
export const MAX_FIELDS = 20_000;

const MAX_VARINT_BYTES = 10;

function varint(bytes: Uint8Array, at: number): { value: bigint; next: number } | undefined {
  let value = 0n;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    const byte = bytes[at + i];
    if (byte === undefined) return undefined;
    value |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if ((byte & 0x80) === 0) return { value, next: at + i + 1 };
  }
  return undefined;
}

/** One message's fields in order; a truncated or malformed message fails, naming the offset. */
export function decodeFields(bytes: Uint8Array): Result<WireValue[], 'RuntimeAnswerInvalid'> {
  const fields: WireValue[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (fields.length >= MAX_FIELDS)
      return fail('RuntimeAnswerInvalid', `more than ${MAX_FIELDS} fields in one message`);
    const key = varint(bytes, at);
    if (!key) return fail('RuntimeAnswerInvalid', `a truncated field key at byte ${at}`);
    const field = Number(key.value >> 3n);
    const wire = Number(key.value & 7n);
    if (field < 1 || field > 536_870_911) return fail('RuntimeAnswerInvalid', `field number ${field} at byte ${at}`);
    at = key.next;
    const read = readValue(bytes, at, field, wire);
    if (!read.ok) return read;
    fields.push(read.value.item);
    at = read.value.next;
  }
  return ok(fields);
}

function readValue(
  bytes: Uint8Array,
  at: number,
  field: number,
  wire: number,
): Result<{ item: WireValue; next: number }, 'RuntimeAnswerInvalid'> {
  if (wire === 0) {
    const value = varint(bytes, at);
    return value
      ? ok({ item: { field, wire, value: value.value }, next: value.next })
      : fail('RuntimeAnswerInvalid', `a truncated varint at byte ${at}`);
  }
  if (wire === 1 || wire === 5) {
    const next = at + (wire === 1 ? 8 : 4);
    return next <= bytes.length
      ? ok({ item: { field, wire, value: undefined }, next })
      : fail('RuntimeAnswerInvalid', `a truncated fixed field at byte ${at}`);
  }
  if (wire === 2) {
    const length = varint(bytes, at);
    if (!length || length.value > BigInt(bytes.length - length.next))
      return fail('RuntimeAnswerInvalid', `a length past the end of the message at byte ${at}`);
    const next = length.next + Number(length.value);
    return ok({ item: { field, wire, value: bytes.subarray(length.next, next) }, next });
  }
  return fail('RuntimeAnswerInvalid', `wire type ${wire} at byte ${at} (groups are not used by the CRI)`);
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A string field's text; invalid UTF-8 (proto3 strings must be valid) is a failure. */
export function text(bytes: Uint8Array): Result<string, 'RuntimeAnswerInvalid'> {
  try {
    return ok(decoder.decode(bytes));
  } catch {
    return fail('RuntimeAnswerInvalid', 'a string field that is not UTF-8');
  }
}

function encodeVarint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** A length-delimited field (a string, or an encoded submessage). */
export function lengthField(field: number, body: Uint8Array | string): Uint8Array {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return concat([Uint8Array.from([...encodeVarint(field * 8 + 2), ...encodeVarint(bytes.length)]), bytes]);
}

/** A varint field (a bool or an enum). */
export function varintField(field: number, value: number): Uint8Array {
  return Uint8Array.from([...encodeVarint(field * 8), ...encodeVarint(value)]);
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
