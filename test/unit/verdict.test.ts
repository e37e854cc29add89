import { describe, expect, it } from 'vitest';
import { parseIp } from '../../src/addr/ip.js';
import { newHandshake } from '../../src/probe/handshake.js';
import { certifyArrival, type Proof } from '../../src/probe/proof.js';
import type { ProbeTarget } from '../../src/probe/probe-plan.js';
import { failed, passed, type Check } from '../../src/verdict/check.js';
import { decideVerdict, isCertifiedPass, type Verdict, type VerdictInput } from '../../src/verdict/decide-verdict.js';
import type { ProofObligations } from '../../src/verdict/proof-obligations.js';
import {
  formatTerminationMessage,
  TERMINATION_MESSAGE_LIMIT,
  truncateUtf8,
} from '../../src/verdict/termination-message.js';
import { reasonHeadline } from '../../src/reason/guide.js';

const network = passed('pod-network', 'IPv4: 10.0.0.2/24 on eth0');
const probe4 = passed('probe-ipv4', 'IPv4 intercepted');
const probe6 = passed('probe-ipv6', 'IPv6 intercepted');
const notInspected: Check = {
  name: 'rules',
  status: 'not-inspected',
  message: 'no CAP_NET_ADMIN',
  evidence: [],
  required: false,
};
const rulesPassed: Check = { ...passed('rules', 'every question answered'), required: true };

function target(family: 'ipv4' | 'ipv6', port: number): ProbeTarget {
  return {
    family,
    path: 'outbound',
    destination: parseIp(family === 'ipv4' ? '192.0.2.1' : '2001:db8::1')!,
    port,
    expectedPort: 4140,
    via: 'eth0',
  };
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

function decide(
  checks: readonly Check[],
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
    const notRun: Check = {
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
