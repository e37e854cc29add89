import { TERMINATION_LOG_FLAG } from '../../../config/validate-config.js';

/**
 * Where a refused configuration's message goes, read leniently because the command line did not
 * parse: the first --termination-log on argv, else its variable, else the default. The writer never
 * follows a symlink and never blocks, so a hostile path here costs nothing.
 */
export function terminationLogForRefusal(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { path: string; explicit: boolean } {
  const flag = `--${TERMINATION_LOG_FLAG.name}`;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (arg.startsWith(`${flag}=`) && arg.length > flag.length + 1)
      return { path: arg.slice(flag.length + 1), explicit: true };
    const next = argv[index + 1];
    if (arg === flag && next) return { path: next, explicit: true };
  }
  const fromEnv = TERMINATION_LOG_FLAG.env === undefined ? undefined : env[TERMINATION_LOG_FLAG.env];
  return fromEnv
    ? { path: fromEnv, explicit: true }
    : { path: TERMINATION_LOG_FLAG.default ?? '/dev/termination-log', explicit: false };
}
