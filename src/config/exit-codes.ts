import { fail, ok, type Result } from '../reason/result.js';

/**
 * Every exit code that is not a validation verdict (sysexits where one fits), with its meaning:
 * the README's exit-code table is generated from this one (see scripts/docs.mjs).
 */
export const EXIT = {
  pass: 0,
  crash: 1,
  invalidConfig: 64,
  dataError: 65,
  noInput: 66,
  internalError: 70,
  outputError: 74,
  sigint: 130,
  sigterm: 143,
} as const;

export const EXIT_MEANINGS: Readonly<Record<keyof typeof EXIT, string>> = {
  pass: 'interception proven (every required check passed); `explain`: every expectation holds',
  crash:
    'never returned by Interlock: what Node.js returns when the process dies before Interlock can choose a code; reserved so a crash never looks like a verdict',
  invalidConfig:
    'invalid flags, environment or configuration (`ConfigInvalid`, also `ProbeIdentityExcluded`, `NothingToProbe`)',
  dataError: '`explain`: a dump that does not parse, or dumps larger than the 16 MiB input cap (all together)',
  noInput:
    '`explain`: a dump that cannot be read (missing, unreadable, or not a regular file: a FIFO or a device is refused, never waited on)',
  internalError: 'internal error (`InternalError`): a bug, reported in one line without a stack trace',
  outputError: 'the output could not be written (EPIPE, ENOSPC: a closed pipe, a full disk); one line on stderr',
  sigint:
    'interrupted by SIGINT (`Interrupted`); `validate` exits with the failure code instead, the termination message written',
  sigterm:
    'interrupted by SIGTERM (`Interrupted`); a second signal exits at once; `validate` exits with the failure code instead, the termination message written',
};

/** No failure code may be one of these, or a repair controller could not tell a broken pod from a typo. */
export const RESERVED_EXIT_CODES: readonly number[] = Object.values(EXIT);

/** `--failure-exit-code`: 1-255, never a reserved code. */
export function parseFailureExitCode(text: string): Result<number, 'ConfigInvalid'> {
  const trimmed = text.trim();
  const code = /^\d{1,3}$/.test(trimmed) ? Number(trimmed) : NaN;
  if (code >= 1 && code <= 255 && !RESERVED_EXIT_CODES.includes(code)) return ok(code);
  return fail(
    'ConfigInvalid',
    `expected 1-255, not ${RESERVED_EXIT_CODES.filter((reserved) => reserved > 0).join(', ')} (reserved: crash, configuration error, bad input, internal error, output error, signals)`,
  );
}
