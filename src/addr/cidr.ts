import { FAMILY_BITS, formatIp, parseIp, type Family, type IpAddress } from './ip.js';

/** A network: the address with host bits cleared and the prefix length. */
export interface Cidr {
  readonly family: Family;
  readonly base: bigint;
  readonly prefix: number;
}

/** `10.0.0.0/8`, `fd00::/64`, or a bare address meaning a single host. */
export function parseCidr(text: string): Cidr | undefined {
  const [addressText = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const address = parseIp(addressText);
  if (!address) return undefined;
  const bits = FAMILY_BITS[address.family];
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  return { family: address.family, base: address.value & netmask(address.family, prefix), prefix };
}

export function netmask(family: Family, prefix: number): bigint {
  const bits = BigInt(FAMILY_BITS[family]);
  const all = (1n << bits) - 1n;
  return prefix === 0 ? 0n : (all << (bits - BigInt(prefix))) & all;
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  return cidr.family === ip.family && (ip.value & netmask(cidr.family, cidr.prefix)) === cidr.base;
}

export function cidrOf(ip: IpAddress, prefix: number): Cidr {
  return { family: ip.family, base: ip.value & netmask(ip.family, prefix), prefix };
}

export function formatCidr(cidr: Cidr): string {
  return `${formatIp({ family: cidr.family, value: cidr.base })}/${cidr.prefix}`;
}
