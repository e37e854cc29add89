import type { DefaultedFlag } from '../../config/flag-def.js';
import { oneOf } from '../../config/flag-parsers.js';

/**
 * `--output text|json` of `check` and `version`: argv only (no variable), so a stray
 * INTERLOCK_OUTPUT in a shell never changes what a person asked to read. A fresh declaration
 * per command: docs/reference.md lists each command's flag in a row of its own.
 */
export const textOrJsonFlag = (): DefaultedFlag<'text' | 'json'> => ({
  name: 'output',
  short: 'o',
  kind: 'value',
  placeholder: 'text|json',
  help: 'Output format (default {default}).',
  parse: oneOf(['text', 'json']),
  default: 'text',
});
