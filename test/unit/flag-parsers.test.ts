import { describe, expect, it } from 'vitest';
import {
  oneOf,
  parseAddressPerFamily,
  parseBoolean,
  parseCidrSet,
  parseDuration,
  parseIdSet,
  parseIds,
  parseInterfaces,
  parseLoopbackCidr,
  parsePath,
  parsePort,
  parsePortOrZero,
  type FlagParser,
} from '../../src/config/flag-parsers.js';

// Each parser on its own, at the edges the flag table relies on: what it accepts (and as what),
// what it refuses, and the exact problem sentence the operator reads after `--flag="value": `.

function refusal<T>(parser: FlagParser<T>, text: string): string {
  const result = parser(text);
  if (result.ok) throw new Error(`expected ${JSON.stringify(text)} to be refused, got ${JSON.stringify(result.value)}`);
  expect(result.error.reason).toBe('ConfigInvalid');
  return result.error.message;
}

function accepted<T>(parser: FlagParser<T>, text: string): T {
  const result = parser(text);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(text)} to be accepted: ${result.error.message}`);
  return result.value;
}

describe('a refusal is a ConfigInvalid failure', () => {
  it('every parser fails with the ConfigInvalid reason', () => {
    expect(parsePort('x')).toEqual({
      ok: false,
      error: { reason: 'ConfigInvalid', message: 'expected a port from 1 to 65535' },
    });
    expect(parsePath('')).toEqual({ ok: false, error: { reason: 'ConfigInvalid', message: 'expected a path' } });
  });
});

describe('values from the environment may carry surrounding whitespace', () => {
  it('oneOf, ports, port-or-zero and id sets read the trimmed text', () => {
    expect(accepted(oneOf(['linkerd', 'istio']), ' istio\n')).toBe('istio');
    expect(accepted(parsePort, ' 4143 ')).toBe(4143);
    expect(accepted(parsePortOrZero, ' 0\t')).toBe(0);
    expect(accepted(parseIdSet, ' * ')).toEqual({ kind: 'all' });
    expect(accepted(parseCidrSet, ' *\n')).toEqual({ kind: 'all' });
    expect(accepted(parseBoolean, ' TRUE\n')).toBe(true);
  });
});

describe('parsePort', () => {
  it('1 and 65535 are the edges', () => {
    expect(accepted(parsePort, '1')).toBe(1);
    expect(accepted(parsePort, '65535')).toBe(65535);
    expect(refusal(parsePort, '65536')).toBe('expected a port from 1 to 65535');
  });

  it('decimal digits only: no exponent, hex or suffix that Number() would read', () => {
    for (const text of ['1e3', '8e1', '0x50', '80abc', 'x80', '+80', '80.0'])
      expect(refusal(parsePort, text)).toBe('expected a port from 1 to 65535');
  });
});

describe('parsePortOrZero', () => {
  it('0 means none; other values are ports', () => {
    expect(accepted(parsePortOrZero, '0')).toBe(0);
    expect(accepted(parsePortOrZero, '15053')).toBe(15053);
    expect(refusal(parsePortOrZero, '00')).toBe('expected a port from 1 to 65535');
    expect(refusal(parsePortOrZero, '65536')).toBe('expected a port from 1 to 65535');
  });
});

describe('parseIds and parseIdSet', () => {
  it('the largest id is 4294967294 (uid_t -1 is "no id")', () => {
    expect(accepted(parseIds, '4294967294')).toEqual([4294967294]);
    expect(refusal(parseIds, '4294967295')).toBe('"4294967295" is not a numeric uid/gid');
  });

  it('decimal digits only: no exponent or hex that Number() would read', () => {
    for (const text of ['1e3', '0x10', '1000x', '+1'])
      expect(refusal(parseIds, `0,${text}`)).toBe(`"${text}" is not a numeric uid/gid`);
  });

  it('`*` is every group, a list is a list', () => {
    expect(accepted(parseIdSet, '*')).toEqual({ kind: 'all' });
    expect(accepted(parseIdSet, '1337,0')).toEqual({ kind: 'list', ids: [1337, 0] });
    expect(refusal(parseIdSet, '*,1')).toBe('"*" is not a numeric uid/gid');
  });
});

describe('parseLoopbackCidr', () => {
  it('takes an IPv4 CIDR only', () => {
    expect(accepted(parseLoopbackCidr, '127.0.0.0/8')).toMatchObject({ family: 'ipv4', prefix: 8 });
    expect(refusal(parseLoopbackCidr, '::1/128')).toBe('expected an IPv4 CIDR such as 127.0.0.1/32');
    expect(refusal(parseLoopbackCidr, 'loopback')).toBe('expected an IPv4 CIDR such as 127.0.0.1/32');
  });
});

describe('parseInterfaces', () => {
  it('15 characters is the longest name (IFNAMSIZ 16 with the NUL)', () => {
    expect(accepted(parseInterfaces, 'eth0, abcdefghijklmno')).toEqual(['eth0', 'abcdefghijklmno']);
    expect(refusal(parseInterfaces, 'eth0,abcdefghijklmnop')).toBe('"abcdefghijklmnop" is not an interface name');
  });

  it('a slash or inner whitespace is never part of a name', () => {
    expect(refusal(parseInterfaces, 'eth0,net/1')).toBe('"net/1" is not an interface name');
    expect(refusal(parseInterfaces, 'veth a')).toBe('"veth a" is not an interface name');
  });

  it('an empty list is no interface', () => {
    expect(accepted(parseInterfaces, '')).toEqual([]);
  });
});

describe('parseBoolean (switches from the environment)', () => {
  for (const text of ['true', '1', 'yes', 'on', 'True', 'ON']) {
    it(`${JSON.stringify(text)} is true`, () => expect(accepted(parseBoolean, text)).toBe(true));
  }
  for (const text of ['false', '0', 'no', 'off', 'FALSE', 'No']) {
    it(`${JSON.stringify(text)} is false`, () => expect(accepted(parseBoolean, text)).toBe(false));
  }
  for (const text of ['', 'y', 'n', '2', 'enabled', 'truee']) {
    it(`${JSON.stringify(text)} is refused`, () => expect(refusal(parseBoolean, text)).toBe('expected true or false'));
  }
});

describe('parseAddressPerFamily', () => {
  it('one address of each family', () => {
    const value = accepted(parseAddressPerFamily, '192.0.2.1,2001:db8::1');
    expect(Object.keys(value).sort()).toEqual(['ipv4', 'ipv6']);
    expect(value.ipv4?.family).toBe('ipv4');
  });

  it('an empty value is refused, never read as "choose from the routes"', () => {
    expect(refusal(parseAddressPerFamily, '')).toBe('expected one address per family, e.g. 192.0.2.1,2001:db8::1');
    expect(refusal(parseAddressPerFamily, ' , ')).toBe('expected one address per family, e.g. 192.0.2.1,2001:db8::1');
  });

  it('two addresses of one family are refused, not one silently kept', () => {
    expect(refusal(parseAddressPerFamily, '192.0.2.1,192.0.2.2')).toBe('two ipv4 addresses given; one per family');
    expect(refusal(parseAddressPerFamily, '2001:db8::1,192.0.2.1,2001:db8::2')).toBe(
      'two ipv6 addresses given; one per family',
    );
  });
});

describe('parseDuration', () => {
  const timeout = parseDuration(100, 3_600_000);
  it('both bounds are included', () => {
    expect(accepted(timeout, '100ms')).toBe(100);
    expect(accepted(timeout, '60m')).toBe(3_600_000);
  });

  it('one millisecond outside either bound is refused, with the range and examples', () => {
    const sentence = 'expected a duration from 100ms to 1h (500ms, 10s, 1m30s, 1h, 1d)';
    expect(refusal(timeout, '99ms')).toBe(sentence);
    expect(refusal(timeout, '3600001ms')).toBe(sentence);
    expect(refusal(timeout, 'soon')).toBe(sentence);
  });
});

describe('oneOf suggests the closest value for a typo', () => {
  it('names the value one or two edits away', () => {
    const mesh = oneOf(['linkerd', 'istio', 'istio-ambient', 'kuma', 'generic']);
    expect(refusal(mesh, 'linkrd')).toBe(
      'expected one of linkerd, istio, istio-ambient, kuma, generic; did you mean linkerd?',
    );
    expect(refusal(mesh, 'Istio')).toBe(
      'expected one of linkerd, istio, istio-ambient, kuma, generic; did you mean istio?',
    );
    expect(refusal(oneOf(['Ignore', 'Fail'], { say: 'or', exact: true }), 'fail')).toBe(
      'expected Ignore or Fail; did you mean Fail?',
    );
  });

  it('suggests nothing for a value far from every choice, or an empty one', () => {
    const mesh = oneOf(['linkerd', 'istio']);
    expect(refusal(mesh, 'consul')).toBe('expected one of linkerd, istio');
    expect(refusal(mesh, '')).toBe('expected one of linkerd, istio');
  });
});
