import type { FlagDef } from '../config/flag-def.js';
import { DEFAULT_IMAGE } from '../inject/validator-container.js';
import { fail, ok, type Result } from '../reason/result.js';

const text = (value: string): Result<string, 'ConfigInvalid'> =>
  value.trim() ? ok(value.trim()) : fail('ConfigInvalid', 'must not be empty');

/** Interlock's image: one flag of manifest, inject and webhook, in a file of its own so each command's table can hold it. */
export const IMAGE_FLAG: FlagDef<string> = {
  name: 'image',
  kind: 'value',
  placeholder: 'IMAGE',
  help: `Interlock's image (default ${DEFAULT_IMAGE}); webhook: the image it puts in place of the mesh's validator.`,
  commands: ['manifest', 'inject', 'webhook'],
  parse: text,
  default: DEFAULT_IMAGE,
};
