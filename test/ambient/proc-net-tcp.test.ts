import { describe, expect, it } from 'vitest';
import { formatIp } from '../../src/addr/ip.js';
import { parseProcNetTcp, unmapped, type SocketRow } from '../../src/probe/proc-net-tcp.js';
import { prng } from '../harness/prng.js';

// Rows as a little-endian kernel prints them (copied from a pod namespace on this machine's kernel).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:3A99 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41000 1 0000000000000000 100 0 0 10 0
   1: 0100007F:3A99 02C8C80A:9C41 01 00000000:00000000 00:00000000 00000000     0        0 41001 1 0000000000000000 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:3A99 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 42000 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:3A99 0000000000000000FFFF000002C8C80A:9C41 01 00000000:00000000 00:00000000 00000000     0        0 42001 1 0000000000000000 20 4 30 10 -1
   2: 00000000000000000000000001000000:3A99 B80D0120000000000000000002000000:C350 01 00000000:00000000 00:00000000 00000000     0        0 42002 1 0000000000000000 20 4 30 10 -1
`;

const text = (row: SocketRow): string =>
  `${formatIp(unmapped(row.local.address))}:${row.local.port} ${formatIp(unmapped(row.remote.address))}:${row.remote.port} ${row.state}`;

describe('parseProcNetTcp', () => {
  it('reads IPv4 rows in the host byte order of a little-endian kernel', () => {
    const parsed = parseProcNetTcp(TCP, 'ipv4', true);
    expect(parsed.ok && parsed.rows.map(text)).toEqual([
      '0.0.0.0:15001 0.0.0.0:0 10',
      '127.0.0.1:15001 10.200.200.2:40001 1',
    ]);
  });

  it('reads tcp6 rows, IPv4-mapped peers included, and unmaps them', () => {
    const parsed = parseProcNetTcp(TCP6, 'ipv6', true);
    expect(parsed.ok && parsed.rows.map(text)).toEqual([
      ':::15001 :::0 10',
      '127.0.0.1:15001 10.200.200.2:40001 1',
      '::1:15001 2001:db8::2:50000 1',
    ]);
    expect(parsed.ok && parsed.rows[1]?.remote.address.family).toBe('ipv6');
  });

  it('a big-endian kernel prints words as they are', () => {
    const parsed = parseProcNetTcp(TCP.replace('0100007F:3A99 02C8C80A', '7F000001:3A99 0AC8C802'), 'ipv4', false);
    expect(parsed.ok && parsed.rows.map(text)[1]).toBe('127.0.0.1:15001 10.200.200.2:40001 1');
  });

  it('an empty table (header only) has no rows', () => {
    expect(parseProcNetTcp(TCP.split('\n')[0] ?? '', 'ipv4', true)).toEqual({ ok: true, rows: [] });
  });

  const broken: Array<[string, string]> = [
    ['no header', TCP.split('\n').slice(1).join('\n')],
    ['an empty file', ''],
    ['a short address', TCP.replace('0100007F:3A99', '100007F:3A99')],
    ['an IPv6 address in the IPv4 table', TCP.replace('0100007F:3A99', '0000000000000000FFFF00000100007F:3A99')],
    ['a missing state', TCP.replace(' 01 00000000', '  00000000')],
    ['a line of garbage', `${TCP}garbage\n`],
    ['a blank line in the middle', TCP.replace('\n   1:', '\n\n   1:')],
    ['an overlong line', `${TCP}   2: ${'0'.repeat(600)}\n`],
  ];
  for (const [name, input] of broken) {
    it(`refuses ${name}, naming the line`, () => {
      const parsed = parseProcNetTcp(input, 'ipv4', true);
      expect(parsed.ok).toBe(false);
      expect(!parsed.ok && parsed.message).toMatch(/line|header/);
    });
  }
});

describe('parseProcNetTcp under fuzzing', () => {
  const pieces = [
    '\u0000',
    ':',
    ' ',
    '\n',
    'FFFFFFFF',
    'zz',
    '0A',
    '\r',
    '-1',
    '  sl  local_address rem_address   st ',
    '٣',
  ];
  it('never throws, and anything it accepts is well formed', () => {
    const random = prng(33);
    for (let round = 0; round < 3000; round++) {
      let input = random() < 0.5 ? TCP : TCP6;
      for (let edits = 1 + Math.floor(random() * 4); edits > 0; edits--) {
        const at = Math.floor(random() * input.length);
        const cut = Math.floor(random() * 6);
        input = `${input.slice(0, at)}${pieces[Math.floor(random() * pieces.length)] ?? ''}${input.slice(at + cut)}`;
      }
      const table = random() < 0.5 ? 'ipv4' : 'ipv6';
      const parsed = parseProcNetTcp(input, table, true);
      if (!parsed.ok) continue;
      for (const row of parsed.rows) {
        expect(row.local.port).toBeGreaterThanOrEqual(0);
        expect(row.local.port).toBeLessThan(65536);
        expect(row.remote.port).toBeLessThan(65536);
        expect(row.state).toBeLessThan(256);
        expect(row.local.address.family).toBe(table);
        expect(row.local.address.value < 1n << (table === 'ipv4' ? 32n : 128n)).toBe(true);
      }
    }
  });

  it('twenty thousand rows (about the 4 MiB the reader allows) parse', () => {
    const row = TCP.split('\n')[2] ?? '';
    const big = `${TCP.split('\n')[0]}\n${`${row}\n`.repeat(20000)}`;
    const parsed = parseProcNetTcp(big, 'ipv4', true);
    expect(parsed.ok && parsed.rows.length).toBe(20000);
  });
});
