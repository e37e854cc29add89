import type { Family, IpAddress } from '../addr/ip.js';

/** One end of a socket as /proc/net/tcp names it: the address as a number (IPv4-mapped kept), the port. */
export interface TableEndpoint {
  readonly address: IpAddress;
  readonly port: number;
}

/** One row of /proc/net/tcp or tcp6: the socket's two ends and its TCP state (kernel numbering). */
export interface SocketRow {
  /** The table it came from: tcp6 rows are IPv6 sockets, which may carry IPv4-mapped addresses. */
  readonly table: Family;
  readonly local: TableEndpoint;
  readonly remote: TableEndpoint;
  readonly state: number;
}

/** TCP states from include/net/tcp_states.h that the ambient proof distinguishes. */
export const TCP_STATE = { established: 0x01, synSent: 0x02, timeWait: 0x06, close: 0x07, listen: 0x0a } as const;

export type ParsedTable =
  { readonly ok: true; readonly rows: readonly SocketRow[] } | { readonly ok: false; readonly message: string };

/** The kernel's header line starts with `sl`; every other line is one socket. */
const HEADER = /^\s*sl\s+local_address\s+rem(?:ote)?_address\s+st\s/;
const ROW = /^\s*\d+:\s+([0-9A-Fa-f]+):([0-9A-Fa-f]{4})\s+([0-9A-Fa-f]+):([0-9A-Fa-f]{4})\s+([0-9A-Fa-f]{2})\s/;
/** Longer than any line the kernel prints (tcp6 rows are about 180 characters). */
const MAX_LINE = 512;

/**
 * Parses /proc/net/tcp (`table` ipv4) or /proc/net/tcp6 (`table` ipv6). The kernel prints each
 * 32-bit word of an address with %08X in host byte order, so `littleEndian` (the host's) says how
 * to read them. Refuses anything it does not recognise rather than skipping it: a row it cannot
 * read might be the one that proves, or disproves, the capture.
 */
export function parseProcNetTcp(text: string, table: Family, littleEndian: boolean): ParsedTable {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const [header, ...body] = lines;
  if (header === undefined || !HEADER.test(header))
    return { ok: false, message: 'the first line is not the header of a /proc/net/tcp table' };
  const rows: SocketRow[] = [];
  for (const [index, line] of body.entries()) {
    const row = line.length > MAX_LINE ? undefined : parseRow(line, table, littleEndian);
    if (!row) return { ok: false, message: `line ${index + 2} is not a socket row of the ${tableName(table)} table` };
    rows.push(row);
  }
  return { ok: true, rows };
}

export function tableName(table: Family): string {
  return table === 'ipv4' ? '/proc/net/tcp' : '/proc/net/tcp6';
}

function parseRow(line: string, table: Family, littleEndian: boolean): SocketRow | undefined {
  const match = ROW.exec(line);
  if (!match) return undefined;
  const [, localHex = '', localPort = '', remoteHex = '', remotePort = '', state = ''] = match;
  const local = address(localHex, table, littleEndian);
  const remote = address(remoteHex, table, littleEndian);
  if (!local || !remote) return undefined;
  return {
    table,
    local: { address: local, port: parseInt(localPort, 16) },
    remote: { address: remote, port: parseInt(remotePort, 16) },
    state: parseInt(state, 16),
  };
}

function address(hex: string, table: Family, littleEndian: boolean): IpAddress | undefined {
  const words = table === 'ipv4' ? 1 : 4;
  if (hex.length !== words * 8) return undefined;
  let value = 0n;
  for (let word = 0; word < words; word++) {
    const printed = parseInt(hex.slice(word * 8, word * 8 + 8), 16);
    value = (value << 32n) | BigInt(littleEndian ? swap32(printed) : printed);
  }
  return { family: table, value };
}

/** Host order to network order for one 32-bit word printed by a little-endian kernel. */
function swap32(word: number): number {
  return (((word & 0xff) << 24) | ((word & 0xff00) << 8) | ((word >>> 8) & 0xff00) | (word >>> 24)) >>> 0;
}

const MAPPED_PREFIX = 0xffffn << 32n;

/**
 * The address as the IPv4 socket that made it would name it: a dual-stack listener (ztunnel
 * binds [::]) sees an IPv4 peer as ::ffff:a.b.c.d in /proc/net/tcp6.
 */
export function unmapped(ip: IpAddress): IpAddress {
  if (ip.family === 'ipv6' && ip.value >> 32n === MAPPED_PREFIX >> 32n)
    return { family: 'ipv4', value: ip.value & 0xffffffffn };
  return ip;
}
