import { describe, expect, it } from 'vitest';
import { formatDuration, parseDurationMs } from '../../src/config/duration.js';

describe('parseDurationMs', () => {
  const read: Array<[string, number]> = [
    ['5', 5000], // a bare number is seconds, as in Linkerd's and Istio's flags
    ['1.5s', 1500],
    ['1.25s', 1250],
    ['0.5', 500],
    ['2m', 120_000],
    ['500ms', 500],
    [' 5s\n', 5000], // from an environment variable
  ];
  for (const [text, ms] of read) {
    it(`${JSON.stringify(text)} is ${ms} ms`, () => expect(parseDurationMs(text)).toBe(ms));
  }

  // Anything around the number and its unit makes the whole value invalid, never a partial read.
  for (const text of ['x5s', '-5s', '5sx', '5s5', '10 s', '1.s', '.5s', '5y', '', 'ms']) {
    it(`${JSON.stringify(text)} is not a duration`, () => expect(parseDurationMs(text)).toBeUndefined());
  }
});

describe('formatDuration', () => {
  it('whole seconds in s, anything else in ms', () => {
    expect(formatDuration(10_000)).toBe('10s');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(1500)).toBe('1s500ms');
  });

  it('round-trips through parseDurationMs', () => {
    for (const ms of [100, 999, 1000, 61_000, 3_600_000]) expect(parseDurationMs(formatDuration(ms))).toBe(ms);
  });
});
