import { isConfigError } from '../../src/config/config-error.js';
import { buildInterceptionSpec, INTERCEPTION_FLAGS, type InterceptionSpec } from '../../src/config/interception.js';
import { readRawOptions } from '../../src/config/raw-options.js';

/** The interception spec the given flags describe, exactly as the CLI would build it. */
export function specFromFlags(argv: readonly string[]): InterceptionSpec {
  const read = readRawOptions(argv, {}, INTERCEPTION_FLAGS);
  if (!read.ok) throw new Error(read.error.message);
  const built = buildInterceptionSpec(read.options);
  if (isConfigError(built)) throw new Error(built.message);
  return built;
}
