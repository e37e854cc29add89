import { describe, expect, it } from 'vitest';
import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import { judgeAmbient, missingListeners, type AmbientConnection } from '../../src/probe/ambient-capture.js';
import { pollAmbientCapture } from '../../src/probe/ambient-loop.js';
import type { Clock } from '../../src/probe/clock.js';
import type { ProbeTarget } from '../../src/probe/probe-plan.js';
import { isProof } from '../../src/probe/proof.js';
import { parseProcNetTcp, TCP_STATE, type SocketRow } from '../../src/probe/proc-net-tcp.js';

const PORTS = { outbound: 15001, inbound: 15006, tunnel: 15008 };
const ip = (text: string): IpAddress => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(text);
  return parsed;
};
const row = (
  table: 'ipv4' | 'ipv6',
  local: string,
  lport: number,
  remote: string,
  rport: number,
  state: number,
): SocketRow => ({
  table,
  local: { address: ip(local), port: lport },
  remote: { address: ip(remote), port: rport },
  state,
});
const listener = (port: number, table: 'ipv4' | 'ipv6' = 'ipv6'): SocketRow =>
  row(table, table === 'ipv4' ? '0.0.0.0' : '::', port, table === 'ipv4' ? '0.0.0.0' : '::', 0, TCP_STATE.listen);
const ZTUNNEL = [listener(15001), listener(15006), listener(15008), listener(15053)];
const SOURCE = { address: ip('10.1.0.2'), port: 40001 };
const connected: AmbientConnection = { kind: 'connected', source: SOURCE };
const accepted = row('ipv6', '::ffff:127.0.0.1', 15001, '::ffff:10.1.0.2', 40001, TCP_STATE.established);

describe('missingListeners (the re-check reads them too)', () => {
  it('asks the outbound port for the probe family only: an IPv4-only 15006/15008 serves an IPv6 pod', () => {
    const rows = [listener(15001), listener(15006, 'ipv4'), listener(15008, 'ipv4')];
    expect(missingListeners(rows, PORTS, 'ipv6')).toEqual([]);
    expect(missingListeners([listener(15001, 'ipv4'), ...rows.slice(1)], PORTS, 'ipv6')).toEqual([15001]);
    expect(missingListeners([listener(15006)], PORTS, 'ipv4')).toEqual([15001, 15008]);
  });
});

describe('judgeAmbient', () => {
  it('captured: a dual-stack listener holds the accepted row whose peer is the probe socket', () => {
    const seen = judgeAmbient(connected, [...ZTUNNEL, accepted], 'ipv4', PORTS);
    expect(seen.kind).toBe('captured');
  });

  it('captured by an IPv4-only ztunnel too', () => {
    const rows = [listener(15001, 'ipv4'), listener(15006, 'ipv4'), listener(15008, 'ipv4')];
    const seen = judgeAmbient(
      connected,
      [...rows, row('ipv4', '127.0.0.1', 15001, '10.1.0.2', 40001, 1)],
      'ipv4',
      PORTS,
    );
    expect(seen.kind).toBe('captured');
  });

  const notOurs: Array<[string, SocketRow]> = [
    ['another source port', row('ipv6', '::ffff:127.0.0.1', 15001, '::ffff:10.1.0.2', 40002, 1)],
    ['another source address', row('ipv6', '::ffff:127.0.0.1', 15001, '::ffff:10.1.0.3', 40001, 1)],
    ['another local port', row('ipv6', '::ffff:127.0.0.1', 15006, '::ffff:10.1.0.2', 40001, 1)],
    ['a TIME_WAIT leftover', row('ipv6', '::ffff:127.0.0.1', 15001, '::ffff:10.1.0.2', 40001, TCP_STATE.timeWait)],
    [
      'a connection out of port 15001',
      row('ipv6', '::ffff:127.0.0.1', 15001, '::ffff:10.1.0.2', 40001, TCP_STATE.synSent),
    ],
    // Our own socket: its peer is the destination, never itself.
    ['the probe socket itself', row('ipv4', '10.1.0.2', 40001, '192.0.2.7', 15001, 1)],
  ];
  for (const [name, other] of notOurs) {
    it(`listeners present, ${name}: not theirs`, () => {
      const seen = judgeAmbient(connected, [...ZTUNNEL, other], 'ipv4', PORTS);
      expect(seen.kind).toBe('not-theirs');
    });
  }

  it('an IPv4-only listener cannot take an IPv6 probe', () => {
    const rows = [listener(15001, 'ipv4'), listener(15006), listener(15008)];
    const source = { address: ip('fd00::2'), port: 40001 };
    const seen = judgeAmbient(
      { kind: 'connected', source },
      [...rows, row('ipv6', '::1', 15001, 'fd00::2', 40001, 1)],
      'ipv6',
      PORTS,
    );
    expect(seen).toMatchObject({ kind: 'ztunnel-not-listening', missing: [15001] });
  });

  it('accepted but 15008 not bound: ztunnel not listening, naming 15008', () => {
    const seen = judgeAmbient(connected, [listener(15001), listener(15006), accepted], 'ipv4', PORTS);
    expect(seen).toMatchObject({ kind: 'ztunnel-not-listening', missing: [15008] });
  });

  it('refused with nothing on 15001: redirected, refused', () => {
    const seen = judgeAmbient({ kind: 'refused' }, [], 'ipv4', PORTS);
    expect(seen).toMatchObject({ kind: 'ztunnel-not-listening', missing: [15001, 15006, 15008] });
  });

  it('refused while 15001 listens: the refusal came from elsewhere', () => {
    expect(judgeAmbient({ kind: 'refused' }, ZTUNNEL, 'ipv4', PORTS).kind).toBe('not-captured');
  });

  it('an ICMP error or silence: not captured, even with listeners', () => {
    expect(judgeAmbient({ kind: 'unreachable', code: 'EHOSTUNREACH' }, ZTUNNEL, 'ipv4', PORTS).kind).toBe(
      'not-captured',
    );
    expect(judgeAmbient({ kind: 'no-answer', waitedMs: 900 }, ZTUNNEL, 'ipv4', PORTS)).toMatchObject({
      kind: 'not-captured',
      silentMs: 900,
    });
  });

  it('accepted outside the pod with nothing on 15001: not captured', () => {
    expect(judgeAmbient(connected, [], 'ipv4', PORTS).kind).toBe('not-captured');
  });
});

const target: ProbeTarget = {
  family: 'ipv4',
  path: 'outbound',
  destination: ip('192.0.2.7'),
  port: 20001,
  expectedPort: 15001,
  via: 'eth0',
};

function fakeClock(): Clock & { t: number } {
  const clock = {
    t: 0,
    now: () => clock.t,
    sleep: (ms: number) => {
      clock.t += ms;
      return Promise.resolve();
    },
  };
  return clock;
}

describe('pollAmbientCapture', () => {
  it('a capture arriving late passes, and says after how long', async () => {
    const clock = fakeClock();
    const launch = () => {
      clock.t += 10;
      return Promise.resolve(
        clock.t < 2000
          ? judgeAmbient({ kind: 'unreachable', code: 'EHOSTUNREACH' }, [], 'ipv4', PORTS)
          : judgeAmbient(connected, [...ZTUNNEL, accepted], 'ipv4', PORTS),
      );
    };
    const timing = { deadline: 5000, attemptTimeoutMs: 1000, retryIntervalMs: 200 };
    const result = await pollAmbientCapture(target, timing, launch, clock, new AbortController().signal);
    expect(result.status).toBe('passed');
    expect(isProof(result.proof)).toBe(true);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(2000);
    expect(result.elapsedMs).toBeLessThan(2500);
  });

  it('never captured: fails at the deadline with the latest telling miss, after many attempts', async () => {
    const clock = fakeClock();
    const launch = (_t: ProbeTarget, timeoutMs: number) => {
      clock.t += timeoutMs;
      // The last attempt is cut short by the deadline: it must not become the reason.
      return Promise.resolve(judgeAmbient({ kind: 'no-answer', waitedMs: timeoutMs }, [], 'ipv4', PORTS));
    };
    const timing = { deadline: 2120, attemptTimeoutMs: 1000, retryIntervalMs: 50 };
    const result = await pollAmbientCapture(target, timing, launch, clock, new AbortController().signal);
    expect(result.status).toBe('failed');
    expect(result.attempts).toBe(3);
    expect(result.last).toMatchObject({ kind: 'not-captured', silentMs: 1000 });
  });

  it('a capture row whose peer is not the probe socket is never certified', async () => {
    const clock = fakeClock();
    const forged = {
      kind: 'captured' as const,
      accepted: { ...accepted, remote: { ...accepted.remote, port: 1 } },
      source: SOURCE,
    };
    const launch = () => {
      clock.t += 100;
      return Promise.resolve(forged);
    };
    const timing = { deadline: 500, attemptTimeoutMs: 100, retryIntervalMs: 100 };
    const result = await pollAmbientCapture(target, timing, launch, clock, new AbortController().signal);
    expect(result.status).toBe('failed');
    expect(result.proof).toBeUndefined();
  });
});

/** /proc/net/tcp as a little-endian kernel prints it (header and row shape of net/ipv4/tcp_ipv4.c). */
const HEADER_LINE = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const tcpRow = (sl: number, local: string, remote: string, state: string, inode: number): string =>
  `  ${sl}: ${local} ${remote} ${state} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 20 4 30 10 -1`;
const LISTENERS = [
  tcpRow(0, '00000000:3A99', '00000000:0000', '0A', 101),
  tcpRow(1, '00000000:3A9E', '00000000:0000', '0A', 102),
  tcpRow(2, '00000000:3AA0', '00000000:0000', '0A', 103),
];
/** The probe's own socket: 10.1.0.2:40001 to 10.96.0.1:80 as it was dialled. */
const PROBE_ROW = tcpRow(3, '0200010A:9C41', '0100600A:0050', '01', 104);
const table = (...rows: string[]): SocketRow[] => {
  const parsed = parseProcNetTcp([HEADER_LINE, ...rows].join('\n') + '\n', 'ipv4', true);
  if (!parsed.ok) throw new Error(parsed.message);
  return [...parsed.rows];
};

describe('judgeAmbient against a forged socket table (issue 43 item 2)', () => {
  it('a real REDIRECT: the accepted end is local 127.0.0.1 and only the probe holds its port', () => {
    const rows = table(...LISTENERS, PROBE_ROW, tcpRow(4, '0100007F:3A99', '0200010A:9C41', '01', 105));
    expect(judgeAmbient(connected, rows, 'ipv4', PORTS).kind).toBe('captured');
  });

  it('forged: the accepted row has the pod address as its local address', () => {
    const rows = table(...LISTENERS, PROBE_ROW, tcpRow(4, '0200010A:3A99', '0200010A:9C41', '01', 105));
    const seen = judgeAmbient(connected, rows, 'ipv4', PORTS);
    expect(seen.kind).toBe('not-theirs');
    expect(seen).toMatchObject({ sentence: expect.stringContaining('127.0.0.1') });
  });

  it('forged: a second socket holds the probe address and port', () => {
    const rows = table(
      ...LISTENERS,
      PROBE_ROW,
      tcpRow(4, '0200010A:9C41', '0100007F:3A99', '01', 106),
      tcpRow(5, '0100007F:3A99', '0200010A:9C41', '01', 105),
    );
    const seen = judgeAmbient(connected, rows, 'ipv4', PORTS);
    expect(seen.kind).toBe('not-theirs');
    expect(seen).toMatchObject({ sentence: expect.stringContaining('10.1.0.2:40001') });
  });
});
