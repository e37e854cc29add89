import { describe, expect, it } from 'vitest';
import { REASON_GUIDE, reasonHeadline } from '../../src/reason/guide.js';
import { REASONS, type Reason } from '../../src/reason/reason.js';
import { errnoWords, formatElapsed } from '../../src/reason/words.js';
import { familyProbeCheck } from '../../src/validate/probe-checks.js';
import { failed, passed } from '../../src/verdict/verdict-check.js';
import { decideVerdict } from '../../src/verdict/decide-verdict.js';
import { formatTerminationMessage } from '../../src/verdict/termination-message.js';
import { parseIp } from '../../src/addr/ip.js';
import type { ProbeResult } from '../../src/probe/probe-loop.js';

// Issue #36 item 5: what `kubectl describe pod` shows, read by an operator, not a parser.

describe('one vocabulary: durations and socket errors', () => {
  it('whole milliseconds under a second, one decimal of a second above, never a raw float', () => {
    expect(formatElapsed(8.324837000000002)).toBe('8 ms');
    expect(formatElapsed(47.24593399999998)).toBe('47 ms');
    expect(formatElapsed(999.4)).toBe('999 ms');
    expect(formatElapsed(999.6)).toBe('1s');
    expect(formatElapsed(2678.2)).toBe('2.7s');
    expect(formatElapsed(3160.985059)).toBe('3.2s');
    expect(formatElapsed(-5)).toBe('0 ms');
    expect(formatElapsed(Number.NaN)).toBe('0 ms');
  });

  it('socket error codes in words; an unknown code stays as it is', () => {
    expect(errnoWords('EHOSTUNREACH')).toBe('host unreachable');
    expect(errnoWords('ENETUNREACH')).toBe('network unreachable');
    expect(errnoWords('EWHATEVER')).toBe('EWHATEVER');
  });
});

describe('the first line of every termination message', () => {
  const reasons = Object.keys(REASONS) as Reason[];

  it('every reason has a guide, and nothing else does', () => {
    expect(Object.keys(REASON_GUIDE).sort()).toEqual([...reasons].sort());
  });

  for (const reason of reasons) {
    it(`${reason}: starts with the reason word, says what failed and what to do, at most 160 characters`, () => {
      const verdict = { outcome: 'fail' as const, reason, message: 'x'.repeat(400), evidence: [], checks: [] };
      const first = formatTerminationMessage(verdict).split('\n')[0] ?? '';
      expect(first).toBe(reasonHeadline(reason));
      expect(first.startsWith(`${reason}: `)).toBe(true);
      expect(first.length).toBeLessThanOrEqual(160);
      expect(first).toContain(`${REASON_GUIDE[reason].failed}; ${REASON_GUIDE[reason].check}`);
      // The node agent reads the reason as the first word (src/node-agent/blocked.ts).
      expect(/^([A-Za-z][A-Za-z0-9]*)(?::|\s|$)/.exec(first)?.[1]).toBe(reason);
    });
  }
});

function result(overrides: Partial<ProbeResult>): ProbeResult {
  return {
    target: {
      family: 'ipv4',
      path: 'outbound',
      destination: parseIp('192.0.2.196')!,
      port: 20001,
      expectedPort: 4140,
      via: 'eth0',
    },
    status: 'failed',
    attempts: 3,
    launched: 3,
    elapsedMs: 3172.557949,
    longestSilenceMs: 1000,
    outcomes: { unreachable: 2, 'no-answer': 1 },
    lastConclusive: { kind: 'unreachable', code: 'EHOSTUNREACH' },
    ...overrides,
  } as ProbeResult;
}

describe('a failed probe as the operator reads it', () => {
  const check = familyProbeCheck('ipv4', [result({})], 3000);
  const verdict = decideVerdict({
    checks: [passed('pod-network', 'IPv4: 10.244.7.2/24 on eth0'), check],
    obligations: undefined,
    proofs: [],
  });
  const message = formatTerminationMessage(verdict, ['config: mesh=linkerd']);
  const lines = message.trimEnd().split('\n');

  it('no raw float, no errno name, no nested parentheses', () => {
    expect(message).not.toMatch(/\d+\.\d+ ms/);
    expect(message).not.toMatch(/\bE[A-Z]{4,}\b/);
    expect(message).toContain('the network answered: host unreachable');
    expect(message).toContain('3 attempts in 3.2s');
    for (const line of lines) expect(line).not.toMatch(/\([^)]*\(/);
  });

  it('the reason line, the sentence, the configuration, then every check in one shape', () => {
    expect(lines[0]).toBe(reasonHeadline('InterceptionMissing'));
    expect(lines[1]).toMatch(/^IPv4 connection to 192\.0\.2\.196:20001 was not redirected to port 4140: /);
    expect(lines[2]).toBe('config: mesh=linkerd');
    expect(lines[3]).toBe('probe-ipv4 failed InterceptionMissing: as above');
    expect(lines[4]).toMatch(/^ {2}ipv4: probe 192\.0\.2\.196:20001 via eth0, outbound capture/);
    expect(lines[5]).toBe('pod-network passed: IPv4: 10.244.7.2/24 on eth0');
  });

  it('a probe with no answer says the time it took, in the same words as its evidence', () => {
    const silent = familyProbeCheck(
      'ipv4',
      [
        result({
          lastConclusive: undefined,
          lastOutcome: { kind: 'no-answer' },
          elapsedMs: 2678.2,
        } as Partial<ProbeResult>),
      ],
      3000,
    );
    expect(silent.message).toContain('no answer to 3 attempts in 2.7s of a 3s budget');
    expect(silent.evidence[0]).toContain('3 attempts in 2.7s');
  });

  it('other failed checks name their reason without parentheses', () => {
    const both = decideVerdict({
      checks: [check, failed('probe-ipv6', 'InterceptionMissing', 'IPv6 connection was not redirected')],
      obligations: undefined,
      proofs: [],
    });
    expect(both.evidence).toContain('probe-ipv6 failed InterceptionMissing: IPv6 connection was not redirected');
  });
});
