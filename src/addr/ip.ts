import { isIPv6 } from 'node:net';

export type Family = 'ipv4' | 'ipv6';

/** An IP address as a number, so containment and comparison are arithmetic. */
export interface IpAddress {
  readonly family: Family;
  readonly value: bigint;
}

export const FAMILY_BITS: Readonly<Record<Family, number>> = { ipv4: 32, ipv6: 128 };

export function parseIp(text: string): IpAddress | undefined {
  const trimmed = text.trim();
  const v4 = ipv4Number(trimmed);
  if (v4 !== undefined) return { family: 'ipv4', value: BigInt(v4) };
  // Zone ids (fe80::1%eth0) name a link, not an address: reject rather than guess.
  if (!isIPv6(trimmed) || trimmed.includes('%')) return undefined;
  return { family: 'ipv6', value: ipv6ToBigInt(trimmed) };
}

/**
 * A dotted-quad IPv4 address as a number, accepting exactly what node:net's isIPv4 accepts (four
 * decimal octets 0-255, no leading zeros, nothing else), without a regular expression or BigInt
 * arithmetic: rules parsing reads one address per rule.
 */
export function ipv4Number(text: string): number | undefined {
  const length = text.length;
  if (length < 7 || length > 15) return undefined;
  let value = 0;
  let index = 0;
  for (let octets = 1; ; octets++) {
    const start = index;
    let octet = 0;
    while (index < length) {
      const code = text.charCodeAt(index);
      if (code < 48 || code > 57) break;
      octet = octet * 10 + (code - 48);
      index++;
    }
    const digits = index - start;
    if (digits === 0 || digits > 3 || (digits > 1 && text.charCodeAt(start) === 48) || octet > 255) return undefined;
    value = value * 256 + octet;
    if (octets === 4) return index === length ? value : undefined;
    if (index >= length || text.charCodeAt(index) !== 46) return undefined;
    index++;
  }
}

function ipv6ToBigInt(text: string): bigint {
  let head = text;
  let embeddedV4: string[] = [];
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    // ::ffff:1.2.3.4 and ::127.0.0.53 carry an IPv4 address in the last 32 bits.
    const v4 = parseIp(tail);
    const v4value = v4?.value ?? 0n;
    embeddedV4 = [((v4value >> 16n) & 0xffffn).toString(16), (v4value & 0xffffn).toString(16)];
    head = text.slice(0, lastColon + 1) + '0:0';
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups =
    right === undefined ? leftGroups : [...leftGroups, ...Array<string>(missing).fill('0'), ...rightGroups];
  if (embeddedV4.length === 2) groups.splice(6, 2, ...embeddedV4);
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}

export function ipFromBytes(bytes: Uint8Array): IpAddress | undefined {
  if (bytes.length !== 4 && bytes.length !== 16) return undefined;
  const value = Array.from(bytes).reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
  return { family: bytes.length === 4 ? 'ipv4' : 'ipv6', value };
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 'ipv4') {
    return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join('.');
  }
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => Number((ip.value >> shift) & 0xffffn));
  // RFC 5952: compress the longest run of two or more zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLength = 0;
  for (let start = 0; start < 8;) {
    if (groups[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > bestLength && end - start >= 2) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

export function sameIp(a: IpAddress, b: IpAddress): boolean {
  return a.family === b.family && a.value === b.value;
}
