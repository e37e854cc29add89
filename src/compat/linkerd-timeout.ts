import { fail, ok, type Result } from '../reason/result.js';

const UNIT_MS: Readonly<Record<string, bigint>> = { ms: 1n, s: 1000n, m: 60_000n, h: 3_600_000n, d: 86_400_000n };
const U64_MAX = (1n << 64n) - 1n;

/**
 * linkerd-network-validator's own `--timeout` syntax (validator/src/main.rs `parse_timeout`): the
 * text is trimmed, split after its last ASCII digit into a u64 magnitude and a unit of `ms`, `s`,
 * `m`, `h` or `d`; a bare `0` is allowed. No compounds (`1m30s`), no fractions, no overflow.
 * Returns milliseconds.
 */
export function parseLinkerdTimeout(text: string): Result<bigint, 'ConfigInvalid'> {
  const trimmed = text.trim();
  const lastDigit = Math.max(...[...'0123456789'].map((digit) => trimmed.lastIndexOf(digit)));
  if (lastDigit < 0) return fail('ConfigInvalid', 'does not contain a timeout duration value');
  const magnitudeText = trimmed.slice(0, lastDigit + 1);
  const unit = trimmed.slice(lastDigit + 1);
  // Rust's u64 parser: an optional leading '+', then ASCII digits only.
  if (!/^\+?[0-9]+$/.test(magnitudeText)) return fail('ConfigInvalid', `invalid magnitude "${magnitudeText}"`);
  const magnitude = BigInt(magnitudeText.replace('+', ''));
  if (magnitude > U64_MAX) return fail('ConfigInvalid', 'the magnitude overflows');
  if (unit === '' && magnitude === 0n) return ok(0n);
  const multiplier = UNIT_MS[unit];
  if (multiplier === undefined)
    return fail('ConfigInvalid', `invalid duration unit "${unit}" (expected one of 'ms', 's', 'm', 'h', or 'd')`);
  const ms = magnitude * multiplier;
  if (ms > U64_MAX) return fail('ConfigInvalid', "the value overflows when converted to 'ms'");
  return ok(ms);
}
