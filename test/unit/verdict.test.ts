import { describe, expect, it } from 'vitest';
import { parseIp } from '../../src/addr/ip.js';
import { newHandshake } from '../../src/probe/handshake.js';
import { certifyArrival, type Proof } from '../../src/probe/proof.js';
import type { ProbeTarget } from '../../src/probe/probe-plan.js';
import { PRECEDENCE } from '../../src/validate/probe-checks.js';
import { failed, passed, type VerdictCheck } from '../../src/verdict/verdict-check.js';
import { decideVerdict, isCertifiedPass, type Verdict, type VerdictInput } from '../../src/verdict/decide-verdict.js';
import type { ProofObligations } from '../../src/verdict/proof-obligations.js';
import {
  formatTerminationMessage,
  TERMINATION_MESSAGE_LIMIT,
  truncateUtf8,
} from '../../src/verdict/termination-message.js';
import { reasonHeadline } from '../../src/reason/guide.js';

const network = passed('pod-network', 'IPv4: 10.0.0.2/24 on eth0');
const probe4 = passed('probe-ipv4', 'IPv4 intercepted at 192.0.2.1:20001');
const probe6 = passed('probe-ipv6', 'IPv6 intercepted at [2001:db8::1]:20001');
/** As src/validate/probe-checks.ts reports a probe the run stopped before it ended. */
const notRun6: VerdictCheck = {
  name: 'probe-ipv6',
  status: 'not-run',
  message: 'IPv6 probe was interrupted',
  evidence: [],
  required: true,
};
const notInspected: VerdictCheck = {
  name: 'rules',
  status: 'not-inspected',
  message: 'no CAP_NET_ADMIN',
  evidence: [],
  required: false,
};
const rulesPassed: VerdictCheck = { ...passed('rules', 'every question answered'), required: true };

/** An outbound target as planOutbound makes one (Linkerd: outbound port 4140). */
function outbound(family: 'ipv4' | 'ipv6', destination: string, port: number): ProbeTarget {
  return { family, path: 'outbound', destination: parseIp(destination)!, port, expectedPort: 4140, via: 'eth0' };
}

function target(family: 'ipv4' | 'ipv6', port: number): ProbeTarget {
  return outbound(family, family === 'ipv4' ? '192.0.2.1' : '2001:db8::1', port);
}

/** A proof as the probe loop makes one: the listener saw our nonce from our socket and we read its nonce back. */
function proofOf(probeTarget: ProbeTarget): Proof {
  const handshake = newHandshake();
  const source = { address: probeTarget.family === 'ipv4' ? '10.0.0.2' : 'fd00::2', port: 40000 + probeTarget.port };
  const arrival = {
    listenerPort: probeTarget.expectedPort,
    localAddress: '127.0.0.1',
    remote: source,
    clientNonce: handshake.clientNonce,
  };
  const proof = certifyArrival(
    probeTarget,
    { kind: 'intercepted', arrival, source, handshake, reply: handshake.serverNonce },
    1,
  );
  if (typeof proof === 'string') throw new Error(proof);
  return proof;
}

const T4 = [target('ipv4', 20001), target('ipv4', 443)];
const T6 = [target('ipv6', 20001)];
const DUAL: ProofObligations = { families: ['ipv4', 'ipv6'], targets: [...T4, ...T6], rulesRequired: false };
const V4: ProofObligations = { families: ['ipv4'], targets: T4, rulesRequired: false };

function obligedTo(...targets: ProbeTarget[]): ProofObligations {
  return { families: [...new Set(targets.map((each) => each.family))], targets, rulesRequired: false };
}

function decide(
  checks: readonly VerdictCheck[],
  obligations: ProofObligations | undefined,
  proofs: readonly Proof[],
  interruptedBy?: string,
): Verdict {
  const input: VerdictInput = { checks, obligations, proofs, ...(interruptedBy ? { interruptedBy } : {}) };
  return decideVerdict(input);
}

describe('the verdict fails closed', () => {
  it('passes only with every required check passed and every planned target proven', () => {
    const verdict = decide([network, notInspected, probe4], V4, T4.map(proofOf));
    expect(verdict.outcome).toBe('pass');
    expect(isCertifiedPass(verdict)).toBe(true);
  });

  it('no probe at all is not a pass', () => {
    expect(decide([network, notInspected], undefined, [])).toMatchObject({ outcome: 'fail', reason: 'NotProven' });
    expect(decide([network, notInspected], { families: [], targets: [], rulesRequired: false }, [])).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
    });
  });

  it('a missing family is not a pass, even when every check says passed', () => {
    const verdict = decide([network, probe4, probe6], DUAL, T4.map(proofOf));
    expect(verdict).toMatchObject({ outcome: 'fail', reason: 'NotProven' });
    expect(verdict.message).toMatch(/no proof of interception for ipv6 port 20001/);
    expect(decide([network, probe4, probe6], DUAL, [...T4, ...T6].map(proofOf)).outcome).toBe('pass');
  });

  it('a family that had to be proven but has no planned target is not a pass', () => {
    const verdict = decide(
      [network, probe4],
      { families: ['ipv4', 'ipv6'], targets: T4, rulesRequired: false },
      T4.map(proofOf),
    );
    expect(verdict).toMatchObject({ outcome: 'fail', reason: 'NotProven' });
    expect(verdict.message).toMatch(/no probe was planned for ipv6/);
  });

  it('one port of the spread without proof is not a pass', () => {
    const verdict = decide([network, probe4], V4, [proofOf(T4[0]!)]);
    expect(verdict).toMatchObject({ outcome: 'fail', reason: 'NotProven' });
    expect(verdict.message).toMatch(/ipv4 port 443/);
  });

  it('a proof for another target does not count', () => {
    expect(decide([network, probe4], V4, [proofOf(T4[0]!), proofOf(target('ipv4', 80))]).outcome).toBe('fail');
  });

  it('a forged or copied proof does not count', () => {
    const genuine = proofOf(T4[1]!);
    const copy = { ...genuine } as Proof;
    expect(decide([network, probe4], V4, [proofOf(T4[0]!), copy]).outcome).toBe('fail');
    expect(decide([network, probe4], V4, [proofOf(T4[0]!), genuine]).outcome).toBe('pass');
  });

  it('an arrival from another socket, or with other nonces, is never certified', () => {
    const handshake = newHandshake();
    const source = { address: '10.0.0.2', port: 40001 };
    const relayed = {
      listenerPort: 4140,
      localAddress: '127.0.0.1',
      remote: { address: '10.0.0.1', port: 5555 },
      clientNonce: handshake.clientNonce,
    };
    expect(
      certifyArrival(
        T4[0]!,
        { kind: 'intercepted', arrival: relayed, source, handshake, reply: handshake.serverNonce },
        1,
      ),
    ).toMatch(/not come from the probe socket/);
    const arrival = { ...relayed, remote: source };
    expect(
      certifyArrival(T4[0]!, { kind: 'intercepted', arrival, source, handshake, reply: newHandshake().serverNonce }, 1),
    ).toMatch(/nonce/);
    expect(
      certifyArrival(
        T4[0]!,
        {
          kind: 'intercepted',
          arrival: { ...arrival, clientNonce: newHandshake().clientNonce },
          source,
          handshake,
          reply: handshake.serverNonce,
        },
        1,
      ),
    ).toMatch(/nonce/);
    expect(
      certifyArrival(
        T4[0]!,
        {
          kind: 'intercepted',
          arrival: { ...arrival, listenerPort: 4143 },
          source,
          handshake,
          reply: handshake.serverNonce,
        },
        1,
      ),
    ).toMatch(/port 4143, not 4140/);
  });

  it('a required check that did not run is not a pass', () => {
    const notRun: VerdictCheck = {
      name: 'probe-ipv6',
      status: 'not-run',
      message: 'interrupted',
      evidence: [],
      required: true,
    };
    expect(decide([network, probe4, notRun], V4, T4.map(proofOf))).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
    });
  });

  it('rules required but not run (or not passed) is not a pass', () => {
    const required = { ...V4, rulesRequired: true };
    expect(decide([network, probe4], required, T4.map(proofOf))).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
    });
    expect(decide([network, probe4, notInspected], required, T4.map(proofOf))).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
    });
    expect(decide([network, probe4, rulesPassed], required, T4.map(proofOf)).outcome).toBe('pass');
  });

  it('rules "not inspected" is never counted as passed when required', () => {
    expect(decide([network, probe4, { ...notInspected, required: true }], V4, T4.map(proofOf)).outcome).toBe('fail');
  });

  it('the most specific failure leads: the rules engine before the probe', () => {
    const probeFailed = failed('probe-ipv4', 'InterceptionMissing', 'not redirected', [], 'validation', 30);
    const rulesFailed = failed('rules', 'RulesMismatch', 'REDIRECT to 4141 in PROXY_INIT_OUTPUT', [], 'validation', 20);
    const verdict = decide([network, probeFailed, rulesFailed], V4, T4.map(proofOf));
    expect(verdict).toMatchObject({ outcome: 'fail', reason: 'RulesMismatch' });
    expect(verdict.evidence.join('\n')).toMatch(/^probe-ipv4 failed InterceptionMissing: not redirected$/m);
  });

  it('a configuration problem is its own outcome', () => {
    expect(
      decide(
        [failed('probe-plan', 'ProbeIdentityExcluded', 'runs as proxy uid', [], 'configuration', 0)],
        undefined,
        [],
      ).outcome,
    ).toBe('config');
  });

  it('a signal overrides everything, even passed checks', () => {
    expect(decide([network, probe4], V4, T4.map(proofOf), 'SIGTERM')).toMatchObject({
      outcome: 'interrupted',
      reason: 'Interrupted',
    });
  });

  it('only the deciding function certifies a pass: a copy or a hand-made pass verdict is not one', () => {
    const verdict = decide([network, probe4], V4, T4.map(proofOf));
    expect(isCertifiedPass({ ...verdict })).toBe(false);
    expect(isCertifiedPass({ outcome: 'pass', reason: 'Intercepted', message: '', evidence: [], checks: [] })).toBe(
      false,
    );
  });
});

describe('a proof discharges only the obligation of the very target it was made for', () => {
  const planned = outbound('ipv4', '192.0.2.1', 20001);

  it('the proof of the planned target itself passes (the control for the cases below)', () => {
    expect(decide([network, probe4], obligedTo(planned), [proofOf(planned)]).outcome).toBe('pass');
  });

  it('a proof to another address on the same ports is not a pass', () => {
    const verdict = decide([network, probe4], obligedTo(planned), [proofOf(outbound('ipv4', '198.51.100.7', 20001))]);
    expect(verdict).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
      message: 'no probe proved interception: no proof of interception for ipv4 port 20001',
    });
  });

  it('a proof of the proxy-loopback capture does not discharge the outbound capture, same address and ports', () => {
    const loopback: ProbeTarget = { ...planned, path: 'proxy-loopback', via: 'lo' };
    expect(decide([network, probe4], obligedTo(planned), [proofOf(loopback)])).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
    });
    expect(decide([network, probe4], obligedTo(loopback), [proofOf(planned)])).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
    });
  });

  it('an arrival at another listener port (the inbound 4143) does not prove the redirect to 4140', () => {
    const toInbound: ProbeTarget = { ...planned, expectedPort: 4143 };
    expect(decide([network, probe4], obligedTo(planned), [proofOf(toInbound)])).toMatchObject({
      outcome: 'fail',
      reason: 'NotProven',
    });
  });

  it("a proof in another family does not discharge this one, even to the same 32 bits (::c000:201 is 192.0.2.1's number)", () => {
    const verdict = decide([network, probe4], obligedTo(planned), [proofOf(outbound('ipv6', '::c000:201', 20001))]);
    expect(verdict).toMatchObject({ outcome: 'fail', reason: 'NotProven' });
  });
});

describe('which failure leads', () => {
  const listener = failed(
    'probe-listener',
    'ProbePortInUse',
    'port 4140 (ipv4) is already bound by another process in the pod',
    [],
    'validation',
    PRECEDENCE.listener,
  );
  const rules = failed(
    'rules',
    'RulesMismatch',
    'REDIRECT to 4141 in PROXY_INIT_OUTPUT',
    [],
    'validation',
    PRECEDENCE.rules,
  );

  it('the lower precedence leads whatever order the checks are listed in', () => {
    expect(decide([network, listener, rules], undefined, []).reason).toBe('ProbePortInUse');
    expect(decide([network, rules, listener], undefined, []).reason).toBe('ProbePortInUse');
  });

  it('a rules engine failure is an internal error, not a verdict on the pod', () => {
    const engine = failed(
      'rules',
      'RulesEngineError',
      'the rules engine failed: stack overflow',
      [],
      'internal',
      PRECEDENCE.rules,
    );
    expect(decide([network, engine, probe4], undefined, [])).toMatchObject({
      outcome: 'internal',
      reason: 'RulesEngineError',
    });
  });

  it('a failed check that names no reason still fails, as ValidationFailed', () => {
    const bare: VerdictCheck = {
      name: 'probe-ipv4',
      status: 'failed',
      message: 'not redirected',
      evidence: [],
      required: true,
    };
    const verdict = decide([network, bare], undefined, []);
    expect(verdict).toMatchObject({ outcome: 'fail', reason: 'ValidationFailed' });
    expect(formatTerminationMessage(verdict).split('\n').slice(0, 2)).toEqual([
      reasonHeadline('ValidationFailed'),
      'not redirected',
    ]);
  });
});

describe('the termination message', () => {
  it('starts with `<Reason>: <what failed>; <what to do>`, then the sentence on one line', () => {
    const verdict = decide([network, failed('probe-ipv4', 'InterceptionMissing', 'line one\nline two')], V4, []);
    const message = formatTerminationMessage(verdict);
    expect(message.split('\n').slice(0, 2)).toEqual([reasonHeadline('InterceptionMissing'), 'line one line two']);
  });

  it('never exceeds 4096 bytes, even with multi-byte evidence, and says it was cut', () => {
    const long = Array.from({ length: 200 }, (_, index) => `évidence ${index} ✓ ${'x'.repeat(40)}`);
    const message = formatTerminationMessage(
      decide([network, failed('probe-ipv4', 'InterceptionMissing', 'missing', long)], V4, []),
    );
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(TERMINATION_MESSAGE_LIMIT);
    expect(message).toMatch(/\[truncated\]$/);
    expect(message.startsWith(`${reasonHeadline('InterceptionMissing')}\nmissing\n`)).toBe(true);
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

describe('the words an operator reads', () => {
  it('a failure: reason and sentence, then its own evidence, then every other check once, and nothing else', () => {
    const probeFailed = failed(
      'probe-ipv4',
      'InterceptionMissing',
      'the IPv4 probe to 192.0.2.1:20001 was refused',
      ['connect 192.0.2.1:20001: ECONNREFUSED'],
      'validation',
      PRECEDENCE.probe,
    );
    const rulesSkipped: VerdictCheck = {
      name: 'rules',
      status: 'not-inspected',
      reason: 'RulesNotInspected',
      message: 'no CAP_NET_ADMIN',
      evidence: [],
      required: false,
    };
    const verdict = decide([network, rulesSkipped, probeFailed, notRun6], undefined, []);
    expect(formatTerminationMessage(verdict)).toBe(
      [
        reasonHeadline('InterceptionMissing'),
        'the IPv4 probe to 192.0.2.1:20001 was refused',
        'probe-ipv4 failed InterceptionMissing: as above',
        '  connect 192.0.2.1:20001: ECONNREFUSED',
        'pod-network passed: IPv4: 10.0.0.2/24 on eth0',
        'rules not-inspected RulesNotInspected: no CAP_NET_ADMIN',
        'probe-ipv6 not-run: IPv6 probe was interrupted',
        '',
      ].join('\n'),
    );
  });

  it('a failed check made without evidence adds none', () => {
    const verdict = decide([failed('rules', 'RulesMismatch', 'REDIRECT to 4141 in PROXY_INIT_OUTPUT')], undefined, []);
    expect(verdict.evidence).toEqual([]);
    expect(formatTerminationMessage(verdict)).toBe(
      `${reasonHeadline('RulesMismatch')}\nREDIRECT to 4141 in PROXY_INIT_OUTPUT\n`,
    );
  });

  it("a pass: Intercepted, with every probe's sentence and no other check's, and a named pass reason is not shown as a cause", () => {
    const targets = [outbound('ipv4', '192.0.2.1', 20001), outbound('ipv6', '2001:db8::1', 20001)];
    const named: VerdictCheck = { ...probe6, reason: 'Intercepted' };
    const verdict = decide([network, probe4, named], obligedTo(...targets), targets.map(proofOf));
    expect(verdict.outcome).toBe('pass');
    expect(formatTerminationMessage(verdict)).toBe(
      [
        reasonHeadline('Intercepted'),
        'IPv4 intercepted at 192.0.2.1:20001; IPv6 intercepted at [2001:db8::1]:20001',
        'pod-network passed: IPv4: 10.0.0.2/24 on eth0',
        'probe-ipv4 passed: IPv4 intercepted at 192.0.2.1:20001',
        'probe-ipv6 passed: IPv6 intercepted at [2001:db8::1]:20001',
        '',
      ].join('\n'),
    );
  });

  it('an interruption names the signal', () => {
    const verdict = decide([network, probe4, notRun6], undefined, [], 'SIGTERM');
    expect(formatTerminationMessage(verdict).split('\n').slice(0, 2)).toEqual([
      reasonHeadline('Interrupted'),
      'validation was interrupted by SIGTERM before interception was proven',
    ]);
  });

  it("a message of exactly the kubelet's 4096 bytes is kept whole; one byte more is cut and says so", () => {
    const head = `${reasonHeadline('RulesMismatch')}\n`;
    const room = TERMINATION_MESSAGE_LIMIT - Buffer.byteLength(head) - 1;
    const wide = Math.floor(room / 2) - 1;
    const fits = 'é'.repeat(wide) + 'x'.repeat(room - 2 * wide);
    const whole = formatTerminationMessage(decide([failed('rules', 'RulesMismatch', fits)], undefined, []));
    expect(Buffer.byteLength(whole)).toBe(TERMINATION_MESSAGE_LIMIT);
    expect(whole).toBe(`${head}${fits}\n`);
    const cut = formatTerminationMessage(decide([failed('rules', 'RulesMismatch', `${fits}x`)], undefined, []));
    expect(cut).toMatch(/\n\[truncated\]$/);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(TERMINATION_MESSAGE_LIMIT);
  });
});

describe('truncateUtf8 under a limit shorter than its marker', () => {
  it('never returns more bytes than the limit', () => {
    for (const limit of [0, 1, 8, 11, 12, 13]) {
      expect(Buffer.byteLength(truncateUtf8('x'.repeat(40), limit)), `limit ${limit}`).toBeLessThanOrEqual(limit);
    }
  });

  it('keeps as much of the marker as fits, and nothing for a negative limit', () => {
    expect(truncateUtf8('x'.repeat(40), 5)).toBe('\n[tru');
    expect(truncateUtf8('x'.repeat(40), 1)).toBe('\n');
    expect(truncateUtf8('x'.repeat(40), -3)).toBe('');
    expect(truncateUtf8('x'.repeat(40), 12)).toBe('\n[truncated]');
    expect(truncateUtf8('x'.repeat(40), 13)).toBe('x\n[truncated]');
  });
});
