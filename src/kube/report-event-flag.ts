import { configError, type ConfigError } from '../config/config-error.js';
import type { FlagDef } from '../config/flag-def.js';
import type { FlagSpec } from '../config/flag-spec.js';
import type { RawOptions } from '../config/raw-options.js';
import { fail, ok } from '../reason/result.js';

/** `validate --report-event`, declared once; the shared flag table takes it at merge. */
export const REPORT_EVENT_FLAG_DEF: FlagDef<boolean> = {
  name: 'report-event',
  kind: 'switch',
  env: 'INTERLOCK_REPORT_EVENT',
  help: 'On failure, post a Warning Event on the pod (POD_NAME, POD_NAMESPACE, POD_UID; at most 1 s; never changes the verdict).',
  commands: ['validate'],
  parse: (text) => (text === 'true' ? ok(true) : text === 'false' ? ok(false) : fail('ConfigInvalid', 'expected true or false')),
  default: false,
};

/** The same flag in the shape validate's current reader takes. */
export const REPORT_EVENT_FLAG: FlagSpec = { name: 'report-event', arity: 'switch', help: REPORT_EVENT_FLAG_DEF.help };

export function reportEventRequested(raw: RawOptions): boolean | ConfigError {
  const option = raw.get('report-event');
  if (!option) return false;
  const parsed = REPORT_EVENT_FLAG_DEF.parse(option.value);
  return parsed.ok ? parsed.value : configError(option.source, option.value, parsed.error.message);
}
