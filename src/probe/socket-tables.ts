import { endianness } from 'node:os';
import type { Family } from '../addr/ip.js';
import { describeProblem, readBoundedFile } from '../file/read-bounded-file.js';
import { parseProcNetTcp, tableName, type SocketRow } from './proc-net-tcp.js';

export type TablesRead =
  { readonly ok: true; readonly rows: readonly SocketRow[] } | { readonly ok: false; readonly message: string };

/** Reads the TCP sockets of the namespace this process is in (tcp and tcp6). */
export type ReadSocketTables = () => TablesRead;

/**
 * A pod's init container sees the sockets of ztunnel and of nothing else yet; 4 MiB is over
 * 20 000 rows, far beyond any pod, and bounds what a flood of sockets can make us read.
 */
const MAX_TABLE_BYTES = 4 * 1024 * 1024;
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * /proc/net/* shows the network namespace of the process that reads it: the validator runs in
 * the pod's, so these are the pod's own sockets. No capability is needed. A kernel without IPv6
 * has no tcp6: read as empty, since no IPv6 socket can exist then.
 */
export const readPodSocketTables: ReadSocketTables = () => {
  const rows: SocketRow[] = [];
  for (const table of ['ipv4', 'ipv6'] as const satisfies readonly Family[]) {
    const read = readBoundedFile(tableName(table), MAX_TABLE_BYTES);
    if (!read.ok) {
      if (table === 'ipv6' && read.error.kind === 'unreadable' && read.error.code === 'ENOENT') continue;
      return { ok: false, message: `cannot read ${tableName(table)}: ${describeProblem(read.error)}` };
    }
    const parsed = parseProcNetTcp(read.bytes.toString('latin1'), table, LITTLE_ENDIAN);
    if (!parsed.ok) return { ok: false, message: `${tableName(table)}: ${parsed.message}` };
    rows.push(...parsed.rows);
  }
  return { ok: true, rows };
};
