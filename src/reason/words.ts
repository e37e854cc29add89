/**
 * The one vocabulary every command prints in: durations and socket errors. The termination
 * message, `explain` and the logs' sentences all say a time and an error the same way.
 */

/**
 * An elapsed time as an operator reads it: whole milliseconds under a second (`47 ms`), one
 * decimal of a second above (`3.2s`), never a raw float. Negative or non-finite input is `0 ms`.
 */
export function formatElapsed(ms: number): string {
  const value = Number.isFinite(ms) && ms > 0 ? ms : 0;
  if (value < 999.5) return `${Math.round(value)} ms`;
  const seconds = Math.round(value / 100) / 10;
  return `${Number.isInteger(seconds) ? seconds.toFixed(0) : seconds.toFixed(1)}s`;
}

const ERRNO_WORDS: Readonly<Record<string, string>> = {
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host down',
  ENETDOWN: 'network down',
  EADDRNOTAVAIL: 'address not available in the pod',
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
  ENOENT: 'no such file',
  EAFNOSUPPORT: 'address family not supported',
  EINVAL: 'invalid argument',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files on the system',
  ENOBUFS: 'no buffer space',
};

/** A socket or file error code in words (`host unreachable`); a code without words stays as it is. */
export function errnoWords(code: string): string {
  return ERRNO_WORDS[code] ?? code;
}
