import { fail, type Failure } from '../reason/result.js';
import { quoted, safeSentence } from './echo-value.js';

export type ConfigFailure = Failure<'ConfigInvalid'>;
export type ConfigResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ConfigFailure };

/** Names the flag (or environment variable) and the value at fault; value and problem are echoed safely. */
export function configInvalid(
  source: string,
  value: string,
  problem: string,
): { readonly ok: false; readonly error: ConfigFailure } {
  return fail('ConfigInvalid', `${source}=${quoted(value)}: ${safeSentence(problem)}`);
}
