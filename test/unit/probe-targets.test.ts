import { describe, expect, it } from 'vitest';
import { formatIp, parseIp } from '../../src/addr/ip.js';
import { parsePortSet } from '../../src/addr/port-set.js';
import { PRESETS, type InterceptionSpec } from '../../src/config/interception.js';
import { assessPodNetwork } from '../../src/network/assess-pod-network.js';
import type { PodNetwork } from '../../src/network/pod-network.js';
import { planProbes, type PlanInput, type ProbePlan } from '../../src/probe/probe-plan.js';
import { podNetwork } from './pod-network-fixtures.js';

const APP = { uid: 1000, gid: 1000, groups: [] };
const ISTIO_PROXY = { uid: 1337, gid: 1337, groups: [] };
const NET = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1', v6: 'fd00:1::5/64', default6: 'fd00:1::1' });

function plan(extra: Partial<PlanInput> = {}, network: PodNetwork = NET): ProbePlan {
  return planProbes({
    spec: PRESETS.linkerd.spec,
    network,
    assessment: assessPodNetwork(network, 'auto'),
    identity: APP,
    overrides: {},
    hints: {},
    probePort: undefined,
    randomPort: 40123,
    ...extra,
  });
}

function ports(result: ProbePlan, family: 'ipv4' | 'ipv6'): number[] {
  if (!result.ok) throw new Error(result.problem.message);
  return result.targets.filter((target) => target.family === family).map((target) => target.port);
}

function ports4(text: string): InterceptionSpec['includeOutboundPorts'] {
  const parsed = parsePortSet(text);
  if (!parsed.ok) throw new Error(text);
  return parsed.value;
}

describe('the probe spread: several ports per family, one deadline', () => {
  it('the first port, 80, 443 and the random port, in both families', () => {
    expect(ports(plan(), 'ipv4')).toEqual([20001, 80, 443, 40123]);
    expect(ports(plan(), 'ipv6')).toEqual([20001, 80, 443, 40123]);
  });

  it('every port of --include-outbound-ports is added; excluded ports are skipped and said so', () => {
    const spec: InterceptionSpec = {
      ...PRESETS.linkerd.spec,
      includeOutboundPorts: ports4('8080,9000-9100'),
      excludeOutboundPorts: ports4('443'),
    };
    const result = plan({ spec });
    expect(ports(result, 'ipv4')).toEqual([20001, 80, 40123, 8080, 9000, 9100]);
    expect(result.ok && result.notes.join('\n')).toMatch(
      /IPv4: skipped port 443: excluded by --exclude-outbound-ports 443/,
    );
    expect(result.ok && result.notes.join('\n')).toMatch(/random port 40123/);
  });

  it('a handful of connects at most', () => {
    const spec: InterceptionSpec = {
      ...PRESETS.linkerd.spec,
      includeOutboundPorts: ports4('1000,2000,3000,4000,5000,6000,7000'),
    };
    const result = plan({ spec });
    expect(ports(result, 'ipv4')).toHaveLength(8);
    expect(result.ok && result.notes.join('\n')).toMatch(/skipped port 7000: more than 8 ports per family/);
  });

  it('a random port that is the listener port is skipped', () => {
    expect(ports(plan({ randomPort: 4140 }), 'ipv4')).toEqual([20001, 80, 443]);
  });

  it("as Istio's proxy uid the spread goes to the pod's own address, never to the tunnel or an excluded port", () => {
    const result = plan({ spec: PRESETS.istio.spec, identity: ISTIO_PROXY, randomPort: 15008 });
    expect(ports(result, 'ipv4')).toEqual([20001, 80, 443]);
    expect(
      result.ok && result.targets.every((target) => target.path === 'proxy-loopback' && target.expectedPort === 15006),
    ).toBe(true);
    expect(result.ok && result.notes.join('\n')).toMatch(/skipped port 15008: the inbound tunnel port/);
  });
});

describe('no target may reach the listener without the rules', () => {
  const local: Array<[string, string]> = [
    ['0.0.0.0', 'unspecified'],
    ['127.9.9.9', 'loopback'],
    ['10.244.1.5', 'pod itself'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:192.0.2.1', 'IPv4-mapped'],
  ];
  for (const [address, why] of local) {
    it(`--probe-address ${address} is a configuration error (${why})`, () => {
      const ip = parseIp(address)!;
      const result = plan({ overrides: { [ip.family]: ip } });
      expect(result.ok ? 'ok' : `${result.problem.kind} ${result.problem.message}`).toMatch(
        new RegExp(`^ConfigInvalid .*${why}`),
      );
    });
  }

  it('a local --probe-address is refused even for a family the pod does not have', () => {
    const v4only = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    expect(plan({ overrides: { ipv6: parseIp('::')! } }, v4only)).toMatchObject({
      ok: false,
      problem: { kind: 'ConfigInvalid', family: 'ipv6' },
    });
  });

  it('--probe-port equal to the listener port is a configuration error, for the app and for the proxy', () => {
    expect(plan({ probePort: 4140 })).toMatchObject({ ok: false, problem: { kind: 'ConfigInvalid' } });
    expect(plan({ probePort: 15006, spec: PRESETS.istio.spec, identity: ISTIO_PROXY })).toMatchObject({
      ok: false,
      problem: { kind: 'ConfigInvalid' },
    });
    // The app's probe may use the inbound port: it is not where the app's probe is listened for.
    expect(plan({ probePort: 4143 }).ok).toBe(true);
  });

  it('as the proxy with --inbound-port 20001 the first port steps around it', () => {
    const result = plan({ spec: { ...PRESETS.istio.spec, inboundPort: 20001 }, identity: ISTIO_PROXY });
    expect(ports(result, 'ipv4')[0]).toBe(20002);
    expect(ports(result, 'ipv4')).not.toContain(20001);
  });
});

describe('--probe-address-hint: a soft preference', () => {
  it('used when routed and captured', () => {
    const hint = parseIp('203.0.113.77')!;
    const result = plan({ hints: { ipv4: hint } });
    expect(result.ok && formatIp(result.targets[0]!.destination)).toBe('203.0.113.77');
  });

  it("air-gapped (Linkerd's 1.1.1.1 with no default route): another address, and the log says why", () => {
    const network = podNetwork({
      v4: '10.244.1.5/24',
      extraRoutes: [
        {
          family: 'ipv4',
          table: 254,
          type: 'unicast',
          destination: { family: 'ipv4', base: 0x0a600000n, prefix: 12 },
          gateway: parseIp('10.244.1.1'),
          outputLinkIndex: 2,
        },
      ],
    });
    const result = plan({ hints: { ipv4: parseIp('1.1.1.1')! } }, network);
    expect(result.ok && formatIp(result.targets[0]!.destination)).toBe('10.111.255.254');
    expect(result.ok && result.notes[0]).toBe(
      "IPv4: probe address hint 1.1.1.1: no route covers it; chose 10.111.255.254 from the pod's routes instead",
    );
  });

  it('a hint that is local is passed over, never used', () => {
    const result = plan({ hints: { ipv4: parseIp('127.0.0.1')! } });
    expect(result.ok && formatIp(result.targets[0]!.destination)).toBe('192.0.2.1');
    expect(result.ok && result.notes[0]).toMatch(/hint 127\.0\.0\.1: is a loopback address; chose 192\.0\.2\.1/);
  });
});

describe('a tentative IPv6 address', () => {
  it('keeps its family in auto mode, marked pending, instead of dropping it', () => {
    const assessment = assessPodNetwork(
      podNetwork({ v4: '10.0.0.2/24', default4: '10.0.0.1', v6: 'fd00::2/64', default6: 'fd00::1', tentative6: true }),
      'auto',
    );
    expect(assessment.familiesToProve).toEqual(['ipv4', 'ipv6']);
    expect(assessment.pending).toBe(true);
    expect(assessment.problems).toEqual([
      'IPv6: address fd00::2/64 is still tentative (duplicate address detection did not finish in time)',
    ]);
  });

  it('a family without any address is still not required in auto mode', () => {
    const assessment = assessPodNetwork(podNetwork({ v4: '10.0.0.2/24', default4: '10.0.0.1' }), 'auto');
    expect(assessment).toMatchObject({ familiesToProve: ['ipv4'], pending: false, problems: [] });
  });
});
