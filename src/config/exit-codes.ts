/**
 * Every exit code that is not a validation verdict (sysexits where one fits), with its meaning:
 * docs/reference.md's exit-code table is generated from this one (see scripts/docs.mjs).
 */
export const EXIT = {
  pass: 0,
  crash: 1,
  invalidConfig: 64,
  dataError: 65,
  noInput: 66,
  checkFailed: 69,
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
    'invalid flags, environment or configuration (`ConfigInvalid`, also `ProbeIdentityExcluded`, `NothingToProbe`); `validate --help`, `-h` and `--version` print, then exit 64 too: not a verdict',
  dataError:
    '`explain`: a dump that does not parse, or dumps larger than the 16 MiB input cap (all together); `inject`: input that does not parse, is too large, or is refused (`Manifest*` reasons)',
  noInput:
    '`explain`, `inject`: an input file that cannot be read (missing, unreadable, or not a regular file: a FIFO or a device is refused, never waited on)',
  checkFailed: '`check`: at least one check of the installed parts failed; each failure says what to fix',
  internalError: 'internal error (`InternalError`): a bug, reported in one line without a stack trace',
  outputError: 'the output could not be written (EPIPE, ENOSPC: a closed pipe, a full disk); one line on stderr',
  sigint:
    'interrupted by SIGINT (`Interrupted`); `validate` exits with the failure code instead, the termination message written',
  sigterm:
    'interrupted by SIGTERM (`Interrupted`); a second signal exits at once; `validate` exits with the failure code instead, the termination message written',
};

/** No failure code may be one of these, or a repair controller could not tell a broken pod from a typo. */
export const RESERVED_EXIT_CODES: readonly number[] = Object.values(EXIT);

/** A code a failed validation may exit with: 1-255 and none of the codes above. */
export const isFailureCode = (code: number) => code >= 1 && code <= 255 && !RESERVED_EXIT_CODES.includes(code);
export const LOWEST_FAILURE_CODE = Array.from({ length: 255 }, (_, index) => index + 1).find(isFailureCode) ?? 2;

/** `2-255`: the range docs/reference.md states and the parser's refusal names (1 is a crash's). */
export const FAILURE_EXIT_CODE_RANGE = `${LOWEST_FAILURE_CODE}-255`;
