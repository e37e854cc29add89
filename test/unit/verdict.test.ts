import { describe, expect, it } from 'vitest';
import { failed, passed, type Check } from '../../src/verdict/check.js';
import { decideVerdict } from '../../src/verdict/decide-verdict.js';
import { formatTerminationMessage, TERMINATION_MESSAGE_LIMIT, truncateUtf8 } from '../../src/verdict/termination-message.js';

const network = passed('pod-network', 'IPv4: 10.0.0.2/24 on eth0');
const probe4 = passed('probe-ipv4', 'IPv4 intercepted');
const notInspected: Check = { name: 'rules', status: 'not-inspected', message: 'no CAP_NET_ADMIN', evidence: [], required: false };

describe('the verdict fails closed', () => {
  it('passes only with every required check passed and a probe proven', () => {
    expect(decideVerdict([network, notInspected, probe4]).outcome).toBe('pass');
  });

  it('no probe at all is not a pass', () => {
    expect(decideVerdict([network, notInspected])).toMatchObject({ outcome: 'fail', reason: 'NotProven' });
  });

  it('a required check that did not run is not a pass', () => {
    const notRun: Check = { name: 'probe-ipv6', status: 'not-run', message: 'interrupted', evidence: [], required: true };
    expect(decideVerdict([network, probe4, notRun])).toMatchObject({ outcome: 'fail', reason: 'NotProven' });
  });

  it('rules "not inspected" is never counted as passed when required', () => {
    expect(decideVerdict([network, probe4, { ...notInspected, required: true }]).outcome).toBe('fail');
  });

  it('the most specific failure leads: the rules engine before the probe', () => {
    const probeFailed = failed('probe-ipv4', 'InterceptionMissing', 'not redirected', [], 'validation', 30);
    const rulesFailed = failed('rules', 'RulesMismatch', 'REDIRECT to 4141 in PROXY_INIT_OUTPUT', [], 'validation', 20);
    const verdict = decideVerdict([network, probeFailed, rulesFailed]);
    expect(verdict).toMatchObject({ outcome: 'fail', reason: 'RulesMismatch' });
    expect(verdict.evidence.join('\n')).toMatch(/probe-ipv4: failed \(InterceptionMissing\)/);
  });

  it('a configuration problem is its own outcome', () => {
    expect(decideVerdict([failed('probe-plan', 'ProbeIdentityExcluded', 'runs as proxy uid', [], 'configuration', 0)]).outcome).toBe('config');
  });

  it('a signal overrides everything, even passed checks', () => {
    expect(decideVerdict([network, probe4], 'SIGTERM')).toMatchObject({ outcome: 'interrupted', reason: 'Interrupted' });
  });
});

describe('the termination message', () => {
  it('starts with `<Reason>: <sentence>` on one line', () => {
    const verdict = decideVerdict([network, failed('probe-ipv4', 'InterceptionMissing', 'line one\nline two')]);
    const message = formatTerminationMessage(verdict);
    expect(message.split('\n')[0]).toBe('InterceptionMissing: line one line two');
  });

  it('never exceeds 4096 bytes, even with multi-byte evidence, and says it was cut', () => {
    const long = Array.from({ length: 200 }, (_, index) => `évidence ${index} ✓ ${'x'.repeat(40)}`);
    const message = formatTerminationMessage(decideVerdict([network, failed('probe-ipv4', 'InterceptionMissing', 'missing', long)]));
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(TERMINATION_MESSAGE_LIMIT);
    expect(message).toMatch(/\[truncated\]$/);
    expect(message.startsWith('InterceptionMissing: missing')).toBe(true);
    expect(message).not.toContain('\uFFFD');
  });

  it('truncation backs off to a character boundary', () => {
    const text = '€'.repeat(10); // 3 bytes each
    for (let limit = 14; limit < 30; limit++) {
      const cut = truncateUtf8(text, limit);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(limit);
      expect(cut).not.toContain('\uFFFD');
    }
  });
});
