import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/config/exit-codes.js';
import { parseFailureExitCode } from '../../src/config/flag-parsers.js';

describe('parseFailureExitCode', () => {
  it('the mesh failure codes and the edges of 1-255 that are not reserved', () => {
    for (const code of [2, 95, 97, 126, 254, 255])
      expect(parseFailureExitCode(String(code))).toEqual({ ok: true, value: code });
  });

  it('an environment value with surrounding whitespace', () => {
    expect(parseFailureExitCode(' 126\n')).toEqual({ ok: true, value: 126 });
  });

  it('decimal digits only: no exponent, hex, sign, fraction or suffix that Number() would read', () => {
    for (const text of ['1e2', '0x10', '+95', '95.0', '95abc', 'x95', '256', '1000', '', '9 5']) {
      const result = parseFailureExitCode(text);
      expect(result.ok, text).toBe(false);
      if (!result.ok) expect(result.error.reason).toBe('ConfigInvalid');
    }
  });

  it('every reserved code is refused with the list of them', () => {
    for (const code of Object.values(EXIT)) {
      const result = parseFailureExitCode(String(code));
      expect(result.ok, String(code)).toBe(false);
      if (!result.ok)
        expect(result.error.message).toMatch(/^expected 2-255 except 64, 65, 66, 69, 70, 74, 130, 143 \(reserved/);
    }
  });
});
