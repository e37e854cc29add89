import type { Reason } from './reason.js';

/**
 * The one shape of a fallible answer across the code base: a value, or a failure that carries a
 * reason code and a sentence naming the flag, file, chain, rule, port or address at fault.
 */
export interface Failure<R extends string = Reason> {
  readonly reason: R;
  readonly message: string;
}

export type Result<T, R extends string = Reason> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Failure<R> };

export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

export function fail<R extends string = Reason>(
  reason: R,
  message: string,
): { readonly ok: false; readonly error: Failure<R> } {
  return { ok: false, error: { reason, message } };
}
