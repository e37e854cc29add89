import { describe, expect, it } from 'vitest';
import {
  dnsLabel,
  parseCidrTexts,
  parseCountOrAll,
  parseDirList,
  parseNonBlank,
  parsePluginType,
} from '../../src/config/flag-parsers.js';

const refusal = (result: { ok: boolean; error?: { message: string } }) =>
  result.ok ? undefined : result.error?.message;

describe('parsers moved out of command tables keep their words', () => {
  it('parseNonBlank refuses blank text in the given words, trimming only when asked', () => {
    expect(refusal(parseNonBlank('must not be empty')('   '))).toBe('must not be empty');
    expect(parseNonBlank('x')(' a ')).toEqual({ ok: true, value: 'a' });
    expect(parseNonBlank('x', 'as given')(' a ')).toEqual({ ok: true, value: ' a ' });
  });
  it('parseDirList refuses an empty item instead of dropping it', () => {
    expect(parseDirList('/a, /b')).toEqual({ ok: true, value: ['/a', '/b'] });
    expect(refusal(parseDirList('/a,,/b'))).toBe('expected a comma-separated list of directories');
  });
  it('parsePluginType refuses a leading dash or a path', () => {
    expect(parsePluginType('istio-cni')).toEqual({ ok: true, value: 'istio-cni' });
    expect(parsePluginType('-x').ok).toBe(false);
    expect(parsePluginType('../bin/sh').ok).toBe(false);
  });
  it('parseCountOrAll takes up to four digits, 0 meaning all', () => {
    expect(parseCountOrAll(' 0 ')).toEqual({ ok: true, value: 0 });
    expect(refusal(parseCountOrAll('10000'))).toBe('expected a whole number, 0 for all');
  });
  it('dnsLabel refuses upper case in the caller words', () => {
    expect(refusal(dnsLabel('expected a namespace name')('Shop'))).toBe('expected a namespace name');
    expect(dnsLabel('x')('shop')).toEqual({ ok: true, value: 'shop' });
  });
  it('parseCidrTexts names the first bad item and checks the prefix per family', () => {
    expect(parseCidrTexts('10.0.0.0/24, fd00::/64')).toEqual({ ok: true, value: ['10.0.0.0/24', 'fd00::/64'] });
    expect(refusal(parseCidrTexts('10.0.0.0/33'))).toBe(
      'expected CIDR[,CIDR...] (10.0.0.0/24, fd00::/64), got "10.0.0.0/33"',
    );
    expect(parseCidrTexts('fd00::/128').ok).toBe(true);
    expect(parseCidrTexts('10.0.0.0').ok).toBe(false);
  });
});
