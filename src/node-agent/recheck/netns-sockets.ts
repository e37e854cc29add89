import { endianness } from 'node:os';
import type { Family } from '../../addr/ip.js';
import { parseProcNetTcp, tableName, type SocketRow } from '../../probe/proc-net-tcp.js';
import type { TablesRead } from '../../probe/socket-tables.js';
import { inNetns } from './netns-rules.js';

/** As the validator's own read (src/probe/socket-tables.ts): far beyond any pod, and a bound on a flood. */
const MAX_TABLE_BYTES = 4 * 1024 * 1024;
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * A pod's TCP sockets, tcp and tcp6, as a child that entered its network namespace reads them
 * (/proc/net follows the reader's namespace): where ztunnel binds its listeners for the pod. A
 * kernel without IPv6 has no tcp6, read as empty; anything else unread is said, never empty.
 */
export async function readPodSockets(netnsPath: string, timeoutMs: number): Promise<TablesRead> {
  const rows: SocketRow[] = [];
  for (const table of ['ipv4', 'ipv6'] as const satisfies readonly Family[]) {
    const path = tableName(table);
    const run = await inNetns(netnsPath, 'cat', [path], MAX_TABLE_BYTES, timeoutMs);
    if (run.exitCode !== 0) {
      if (table === 'ipv6' && /No such file/.test(run.stderr)) continue;
      const why = run.timedOut ? 'timed out' : run.overflowed ? `over ${MAX_TABLE_BYTES} bytes` : run.stderr.trim();
      return { ok: false, message: `cannot read ${path} in ${netnsPath}: ${why || `exit ${String(run.exitCode)}`}` };
    }
    const parsed = parseProcNetTcp(run.stdout, table, LITTLE_ENDIAN);
    if (!parsed.ok) return { ok: false, message: `${path} in ${netnsPath}: ${parsed.message}` };
    rows.push(...parsed.rows);
  }
  return { ok: true, rows };
}
