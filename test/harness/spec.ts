import { buildInterceptionSpec } from '../../src/config/build-interception.js';
import type { InterceptionSpec } from '../../src/config/interception.js';
import { INTERCEPTION_FLAGS } from '../../src/config/interception-flags.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';

/** The interception spec the given flags describe, exactly as the CLI would build it. */
export function specFromFlags(argv: readonly string[]): InterceptionSpec {
  const read = parseCommandLine('explain', argv, {}, INTERCEPTION_FLAGS);
  if (!read.ok) throw new Error(read.error.message);
  const built = buildInterceptionSpec(read.value);
  if (!built.ok) throw new Error(built.error.message);
  return built.value;
}
