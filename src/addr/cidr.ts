import { decimal } from './decimal.js';
import { FAMILY_BITS, formatIp, ipv4Number, parseIp, type Family, type IpAddress } from './ip.js';

/** A network: the address with host bits cleared and the prefix length. */
export interface Cidr {
  readonly family: Family;
  readonly base: bigint;
  readonly prefix: number;
}

/** `10.0.0.0/8`, `fd00::/64`, or a bare address meaning a single host. */
export function parseCidr(text: string): Cidr | undefined {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const addressText = slash < 0 ? trimmed : trimmed.slice(0, slash);
  const prefixText = slash < 0 ? undefined : trimmed.slice(slash + 1);
  // Digits only, so also no second slash.
  const prefixNumber = prefixText === undefined ? undefined : decimal(prefixText, 3);
  if (prefixText !== undefined && prefixNumber === undefined) return undefined;
  // IPv4 (one per iptables rule) is masked in plain numbers: one BigInt per network, not a dozen.
  const v4 = ipv4Number(addressText.trim());
  if (v4 !== undefined) {
    const prefix = prefixNumber ?? 32;
    if (prefix > 32) return undefined;
    const size = 2 ** (32 - prefix);
    return { family: 'ipv4', base: BigInt(Math.floor(v4 / size) * size), prefix };
  }
  const address = parseIp(addressText);
  if (!address) return undefined;
  const bits = FAMILY_BITS[address.family];
  const prefix = prefixNumber ?? bits;
  if (prefix > bits) return undefined;
  return { family: address.family, base: address.value & netmask(address.family, prefix), prefix };
}

function computeNetmask(family: Family, prefix: number): bigint {
  const bits = BigInt(FAMILY_BITS[family]);
  const all = (1n << bits) - 1n;
  return prefix === 0 ? 0n : (all << (bits - BigInt(prefix))) & all;
}

/** Every netmask, computed once: the tracer asks for one per address match it evaluates. */
const NETMASKS: Readonly<Record<Family, readonly bigint[]>> = {
  ipv4: Array.from({ length: 33 }, (_, prefix) => computeNetmask('ipv4', prefix)),
  ipv6: Array.from({ length: 129 }, (_, prefix) => computeNetmask('ipv6', prefix)),
};

export function netmask(family: Family, prefix: number): bigint {
  return NETMASKS[family][prefix] ?? computeNetmask(family, prefix);
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
