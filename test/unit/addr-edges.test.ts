import { describe, expect, it } from 'vitest';
import { cidrContains, cidrOf, formatCidr, parseCidr } from '../../src/addr/cidr.js';
import { FAMILY_BITS, formatIp, ipFromBytes, ipv4Number, parseIp, sameIp, type IpAddress } from '../../src/addr/ip.js';
import {
  ALL_PORTS,
  formatPortSet,
  NO_PORTS,
  parsePortSet,
  portSetHas,
  portSetIsEmpty,
  type PortSet,
} from '../../src/addr/port-set.js';

// Edges of the address and port primitives that the mutation run (npm run mutate on src/addr)
// found untested: each expectation here failed against at least one surviving mutant.

const ip = (text: string): IpAddress => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`test address ${text} does not parse`);
  return parsed;
};
const ports = (text: string): PortSet => {
  const parsed = parsePortSet(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};
const problem = (text: string): string => {
  const parsed = parsePortSet(text);
  return parsed.ok ? `accepted ${formatPortSet(parsed.value)}` : parsed.error;
};

describe('port lists at their edges', () => {
  it('accept 1 and 65535 and refuse 0 and 65536, alone or in a list', () => {
    expect(formatPortSet(ports('1'))).toBe('1');
    expect(formatPortSet(ports('65535'))).toBe('65535');
    expect(problem('0')).toBe('"0" is outside 1-65535');
    expect(problem('65536')).toBe('"65536" is outside 1-65535');
    expect(problem('80,0')).toBe('"0" is outside 1-65535');
    expect(problem('0-5')).toBe('"0-5" is outside 1-65535');
    expect(problem('10-65536')).toBe('"10-65536" is outside 1-65535');
    expect(problem('65536-2')).toBe('"65536-2" is outside 1-65535');
    expect(formatPortSet(ports('1-65535'))).toBe('1-65535');
    expect(formatPortSet(ports('65535,1'))).toBe('65535,1');
  });

  it('read `*` alone, padded or inside a list as every port', () => {
    for (const text of ['*', ' * ', '80,*', '*,80']) {
      expect(ports(text), text).toEqual(ALL_PORTS);
      expect(formatPortSet(ports(text)), text).toBe('*');
      expect(portSetHas(ports(text), 1), text).toBe(true);
    }
  });

  it('name what is not a port', () => {
    expect(problem('http')).toBe('"http" is not a port or a port range');
    expect(problem('80,8x')).toBe('"8x" is not a port or a port range');
    expect(problem('90-80')).toBe('"90-80" is a range that ends before it starts');
  });

  it('trim a padded single port, and tolerate a trailing comma', () => {
    expect(formatPortSet(ports(' 80 '))).toBe('80');
    expect(formatPortSet(ports('80,'))).toBe('80');
  });

  it('tell an empty set from every port and from a non-empty list', () => {
    expect(portSetIsEmpty(NO_PORTS)).toBe(true);
    expect(portSetIsEmpty(ports(''))).toBe(true);
    expect(portSetIsEmpty(ALL_PORTS)).toBe(false);
    expect(portSetIsEmpty(ports('80'))).toBe(false);
    expect(NO_PORTS).toEqual({ kind: 'ranges', ranges: [] });
    expect(formatPortSet(NO_PORTS)).toBe('');
  });
});

describe('IP addresses at their edges', () => {
  it('compare family and value', () => {
    expect(sameIp(ip('10.0.0.1'), ip('10.0.0.1'))).toBe(true);
    expect(sameIp(ip('10.0.0.1'), ip('10.0.0.2'))).toBe(false);
    expect(sameIp({ family: 'ipv4', value: 1n }, { family: 'ipv6', value: 1n })).toBe(false);
  });

  it('refuse malformed dotted quads', () => {
    for (const text of [
      '01.2.3.4',
      '1.2.3.256',
      '1..3.4',
      '1234.1.1.1',
      '1.2.3',
      '1.2.3.4.5',
      '1.2.3.4 ',
      '1.2.3.4x',
      '1.2.3.',
    ]) {
      expect(ipv4Number(text), text).toBeUndefined();
    }
    expect(ipv4Number('0.0.0.0')).toBe(0);
    expect(ipv4Number('255.255.255.255')).toBe(0xffffffff);
  });

  it('print IPv6 the RFC 5952 way: the longest zero run (the first on a tie), never a single zero', () => {
    const cases: Record<string, string> = {
      '1:0:0:1:0:0:0:1': '1:0:0:1::1',
      '1:0:0:2:0:0:3:4': '1::2:0:0:3:4',
      '1:0:1:1:1:1:1:1': '1:0:1:1:1:1:1:1',
      '1:2:3:4:5:6:7:0': '1:2:3:4:5:6:7:0',
      '1:2:3:4:5:6:0:0': '1:2:3:4:5:6::',
      '0:0:1:2:3:4:5:6': '::1:2:3:4:5:6',
      '::': '::',
      '::1': '::1',
      '2001:db8::1': '2001:db8::1',
    };
    for (const [text, printed] of Object.entries(cases)) expect(formatIp(ip(text)), text).toBe(printed);
  });

  it('read an IPv4 address embedded in IPv6', () => {
    expect(formatIp(ip('::ffff:1.2.3.4'))).toBe('::ffff:102:304');
    expect(ip('::127.0.0.53').value).toBe(0x7f000035n);
    expect(ip('::ffff:1.2.3.4').family).toBe('ipv6');
  });

  it('build addresses from 4 or 16 bytes only', () => {
    expect(ipFromBytes(Uint8Array.from([1, 2, 3, 4]))).toEqual({ family: 'ipv4', value: 0x01020304n });
    const v6 = ipFromBytes(Uint8Array.from([0xfd, 0, ...Array<number>(13).fill(0), 2]));
    expect(v6?.family).toBe('ipv6');
    expect(v6 && formatIp(v6)).toBe('fd00::2');
    expect(ipFromBytes(Uint8Array.from([1, 2, 3, 4, 5]))).toBeUndefined();
    expect(ipFromBytes(new Uint8Array(0))).toBeUndefined();
  });

  it("know each family's width", () => {
    expect(FAMILY_BITS).toEqual({ ipv4: 32, ipv6: 128 });
  });
});

describe('CIDRs at their edges', () => {
  it('mask padded IPv4 and IPv6 networks, and read a bare address as one host', () => {
    expect(formatCidr(parseCidr(' 10.1.2.3/8 ') ?? cidrOf(ip('0.0.0.0'), 0))).toBe('10.0.0.0/8');
    expect(parseCidr('fd00::1/64')).toEqual({ family: 'ipv6', base: ip('fd00::').value, prefix: 64 });
    expect(parseCidr('fd00::1')).toEqual({ family: 'ipv6', base: ip('fd00::1').value, prefix: 128 });
    expect(parseCidr('10.0.0.1')).toEqual({ family: 'ipv4', base: ip('10.0.0.1').value, prefix: 32 });
  });

  it('refuse prefixes longer than the family and junk after the slash', () => {
    for (const text of [
      '10.0.0.0/33',
      'fd00::/129',
      '10.0.0.0/8/8',
      '10.0.0.0/',
      '10.0.0.0/x',
      '/8',
      'fd00::1%eth0/64',
    ]) {
      expect(parseCidr(text), text).toBeUndefined();
    }
  });

  it('contain everything of their family at /0 and nothing of the other family', () => {
    const all4 = parseCidr('0.0.0.0/0');
    const all6 = parseCidr('::/0');
    expect(all4 && cidrContains(all4, ip('203.0.113.9'))).toBe(true);
    expect(all6 && cidrContains(all6, ip('2001:db8::9'))).toBe(true);
    expect(all6 && cidrContains(all6, ip('203.0.113.9'))).toBe(false);
    expect(cidrOf(ip('2001:db8::9'), 0)).toEqual({ family: 'ipv6', base: 0n, prefix: 0 });
    expect(formatCidr(cidrOf(ip('2001:db8:1:2::9'), 48))).toBe('2001:db8:1::/48');
  });
});
