import { afterEach, describe, expect, it } from 'vitest';
import type { ProbeResult } from '../../src/probe/probe-loop.js';
import type { ProbeTarget } from '../../src/probe/probe-plan.js';
import { parseIp } from '../../src/addr/ip.js';
import { familyProbeCheck } from '../../src/validate/probe-checks.js';
import { corpusFile, verdictLine, usePods } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);

/**
 * A deadline inside the documented range (100ms to 1h) that is too short for one probe attempt
 * must not blame the CNI: InterceptionMissing is what the node agent deletes pods for.
 */
describe('blame only what was seen: a deadline too short for an attempt', () => {
  for (const timeout of ['100ms', '150ms']) {
    it(`--timeout ${timeout} in a correctly meshed pod: a pass or ValidationTimeout, never InterceptionMissing`, async () => {
      const ns = pod({ sink: 'reject' });
      ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'nft');
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', timeout]);
      const head = verdictLine(run.terminationMessage);
      if (run.exitCode === 0) expect(head).toMatch(/^Intercepted: /);
      else {
        expect(run.exitCode, head).toBe(95);
        expect(head).toMatch(/^ValidationTimeout: /);
      }
      expect(head).not.toMatch(/InterceptionMissing|0 attempt/);
    });
  }
});

const TARGET: ProbeTarget = {
  family: 'ipv4',
  path: 'outbound',
  destination: parseIp('198.51.100.7')!,
  port: 20001,
  expectedPort: 4140,
  via: 'eth0',
} as unknown as ProbeTarget;

function result(overrides: Partial<ProbeResult>): ProbeResult {
  return {
    target: TARGET,
    status: 'failed',
    attempts: 0,
    launched: 0,
    interceptedAttempt: 0,
    elapsedMs: 0,
    proof: undefined,
    stranger: undefined,
    lastOutcome: undefined,
    lastConclusive: undefined,
    outcomes: {},
    endedEarly: false,
    longestSilenceMs: 0,
    ...overrides,
  };
}

describe('familyProbeCheck names only what a probe observed', () => {
  it('no attempt answered or timed out: ValidationTimeout', () => {
    const check = familyProbeCheck('ipv4', [result({ launched: 1 })], 100);
    expect(check.reason).toBe('ValidationTimeout');
    expect(check.message).toMatch(/no probe attempt/);
  });

  it('silence cut short by the deadline (a few ms) is not a missing interception', () => {
    const check = familyProbeCheck(
      'ipv4',
      [
        result({
          attempts: 1,
          launched: 1,
          lastOutcome: { kind: 'no-answer', stage: 'connect' },
          outcomes: { 'no-answer': 1 },
          longestSilenceMs: 3,
        }),
      ],
      100,
    );
    expect(check.reason).toBe('ValidationTimeout');
  });

  it('a full second of silence, or a refusal, is InterceptionMissing', () => {
    const silent = result({
      attempts: 1,
      launched: 1,
      lastOutcome: { kind: 'no-answer', stage: 'connect' },
      longestSilenceMs: 1000,
    });
    expect(familyProbeCheck('ipv4', [silent], 1000).reason).toBe('InterceptionMissing');
    const refused = result({
      attempts: 1,
      launched: 1,
      lastConclusive: { kind: 'refused' },
      lastOutcome: { kind: 'refused' },
    });
    expect(familyProbeCheck('ipv4', [refused], 100).reason).toBe('InterceptionMissing');
  });
});
