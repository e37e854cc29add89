import { describe, expect, it } from 'vitest';
import { ALL_FLAGS } from '../../src/cli/all-flags.js';
import { formatDuration, parseDurationMs } from '../../src/config/duration.js';

describe('durations as operators of both meshes write them', () => {
  const read: Array<[string, number]> = [
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1m30s', 90_000], // Go's compound, as Istio's flags take it
    ['1h30m', 5_400_000],
    ['2h45m10s', 9_910_000],
    ['1.5h', 5_400_000],
    ['1s500ms', 1500],
    ['1500us', 2], // Go's microseconds, rounded to the millisecond
    ['90s', 90_000],
    ['10', 10_000],
  ];
  for (const [text, ms] of read) it(`${text} is ${ms} ms`, () => expect(parseDurationMs(text)).toBe(ms));

  for (const text of ['1h-30m', '1m 30s', 'h', '1x', '1m30', '30s1', '1e3s', '--1s', '1d1']) {
    it(`${JSON.stringify(text)} is not a duration`, () => expect(parseDurationMs(text)).toBeUndefined());
  }

  it('formats in the largest units, and what it prints reads back', () => {
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(formatDuration(86_400_000)).toBe('24h');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(1500)).toBe('1s500ms');
    for (const ms of [0, 1, 100, 999, 1000, 61_000, 3_600_000, 3_723_004, 86_400_000])
      expect(parseDurationMs(formatDuration(ms))).toBe(ms);
  });
});

describe('every duration flag', () => {
  const durationFlags = ALL_FLAGS.filter((flag) => flag.placeholder === 'DURATION');

  it('there are several (timeout, recreate-window, breaker-window, version-timeout)', () => {
    expect(durationFlags.map((flag) => flag.name)).toEqual(
      expect.arrayContaining(['timeout', 'recreate-window', 'breaker-window', 'version-timeout']),
    );
  });

  for (const flag of durationFlags) {
    it(`--${flag.name}: the bounds its error names are values it accepts`, () => {
      const refused = flag.parse('9999d');
      expect(refused.ok).toBe(false);
      const message = refused.ok ? '' : refused.error.message;
      const bounds = /from (\S+) to (\S+?)[,;)]?(\s|$)/.exec(message);
      expect(bounds, message).not.toBeNull();
      for (const bound of [bounds?.[1] ?? '', bounds?.[2] ?? '']) expect(flag.parse(bound).ok, bound).toBe(true);
    });
  }
});
