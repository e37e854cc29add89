import { configError, type ConfigError } from './config-error.js';
import { PRESETS, type Mesh } from './interception.js';
import type { RawOptions } from './raw-options.js';

/** Exit codes that are not a validation verdict (sysexits where one fits); the README's table. */
export const EXIT = {
  pass: 0,
  invalidConfig: 64,
  dataError: 65,
  noInput: 66,
  internalError: 70,
  sigint: 130,
  sigterm: 143,
} as const;

const RESERVED = new Set<number>(Object.values(EXIT));

/**
 * The exit code of a failed check: the mesh's own unless --failure-exit-code says otherwise. It
 * may not be a code that already means something else, or a repair controller could not tell a
 * broken pod from a typo.
 */
export function failureExitCodeOf(raw: RawOptions, mesh: Mesh): number | ConfigError {
  const option = raw.get('failure-exit-code');
  if (!option) return PRESETS[mesh].failureExitCode;
  const text = option.value.trim();
  const code = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(code >= 1 && code <= 255) || RESERVED.has(code)) {
    return configError(option.source, option.value, `expected 1-255, not ${[...RESERVED].filter((reserved) => reserved > 0).join(', ')} (configuration error, bad input, internal error and signals)`);
  }
  return code;
}
