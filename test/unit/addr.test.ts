import { describe, expect, it } from 'vitest';
import { cidrContains, formatCidr, parseCidr } from '../../src/addr/cidr.js';
import { formatIp, ipFromBytes, parseIp } from '../../src/addr/ip.js';
import { parsePortSet, portSetHas } from '../../src/addr/port-set.js';

describe('addresses', () => {
  it('round-trips IPv4 and IPv6, compressing the longest zero run', () => {
    for (const text of [
      '10.0.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '2001:db8::1',
      '::1',
      '::',
      'fd00:1:0:0:1::2',
      '1:0:0:2:0:0:0:3',
    ]) {
      const ip = parseIp(text);
      expect(ip, text).toBeDefined();
      expect(parseIp(formatIp(ip!))?.value).toBe(ip!.value);
    }
    expect(formatIp(parseIp('1:0:0:2:0:0:0:3')!)).toBe('1:0:0:2::3');
    expect(formatIp(parseIp('2001:0db8:0000:0000:0000:0000:0000:0001')!)).toBe('2001:db8::1');
  });

  it('reads IPv4-embedded IPv6 (Istio writes ::127.0.0.53)', () => {
    expect(formatIp(parseIp('::127.0.0.53')!)).toBe('::7f00:35');
    expect(parseIp('::ffff:10.0.0.1')?.value).toBe(0xffff0a000001n);
  });

  it('rejects what is not an address', () => {
    for (const text of ['', '10.0.0', '10.0.0.256', 'fe80::1%eth0', 'example.com', '1:2:3:4:5:6:7:8:9'])
      expect(parseIp(text), text).toBeUndefined();
  });

  it('turns netlink byte buffers into addresses', () => {
    expect(formatIp(ipFromBytes(Uint8Array.from([192, 0, 2, 2]))!)).toBe('192.0.2.2');
    expect(ipFromBytes(Uint8Array.from([1, 2, 3]))).toBeUndefined();
  });

  it('CIDRs clear host bits and contain what they should', () => {
    const cidr = parseCidr('10.1.2.3/8')!;
    expect(formatCidr(cidr)).toBe('10.0.0.0/8');
    expect(cidrContains(cidr, parseIp('10.255.0.1')!)).toBe(true);
    expect(cidrContains(cidr, parseIp('11.0.0.1')!)).toBe(false);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('1.2.3.4')!)).toBe(true);
    expect(cidrContains(parseCidr('::/0')!, parseIp('1.2.3.4')!)).toBe(false);
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('fd00::/129')).toBeUndefined();
    expect(formatCidr(parseCidr('2001:db8::1')!)).toBe('2001:db8::1/128');
  });

  it('port sets', () => {
    const set = parsePortSet('80, 8000-8010,9000:9001,').ok
      ? (parsePortSet('80, 8000-8010,9000:9001,') as { ok: true; value: Parameters<typeof portSetHas>[0] }).value
      : undefined;
    expect(set && portSetHas(set, 8005)).toBe(true);
    expect(set && portSetHas(set, 8011)).toBe(false);
    expect(parsePortSet('0').ok).toBe(false);
    expect(parsePortSet('abc').ok).toBe(false);
  });
});
