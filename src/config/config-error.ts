import { fail, type Failure } from '../reason/result.js';
import { quoted, safeSentence } from './echo-value.js';

export type ConfigFailure = Failure<'ConfigInvalid'>;
export type ConfigResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ConfigFailure };

/**
 * Names the flag (or environment variable) and the value at fault; value and problem are echoed
 * safely. Without a value (an unknown flag, a flag missing its value) the flag alone is named.
 */
export function configInvalid(
  source: string,
  value: string | undefined,
  problem: string,
): { readonly ok: false; readonly error: ConfigFailure } {
  return fail(
    'ConfigInvalid',
    `${value === undefined ? source : `${source}=${quoted(value)}`}: ${safeSentence(problem)}`,
  );
}
