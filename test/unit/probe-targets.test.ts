import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../src/addr/cidr.js';
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
    probeAddresses: {},
    probeAddressHints: {},
    probePort: undefined,
    randomPort: 40123,
    probeSpread: true,
    random: () => 0,
    ...extra,
  });
}

function ports(result: ProbePlan, family: 'ipv4' | 'ipv6'): number[] {
  if (!result.ok) throw new Error(result.error.message);
  return result.targets.filter((target) => target.family === family).map((target) => target.port);
}

function ports4(text: string): InterceptionSpec['includeOutboundPorts'] {
  const parsed = parsePortSet(text);
  if (!parsed.ok) throw new Error(text);
  return parsed.value;
}

describe('the probe probeSpread: several ports per family, one deadline', () => {
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
      const result = plan({ probeAddresses: { [ip.family]: ip } });
      expect(result.ok ? 'ok' : `${result.error.kind} ${result.error.message}`).toMatch(
        new RegExp(`^ConfigInvalid .*${why}`),
      );
    });
  }

  it('a local --probe-address is refused even for a family the pod does not have', () => {
    const v4only = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    expect(plan({ probeAddresses: { ipv6: parseIp('::')! } }, v4only)).toMatchObject({
      ok: false,
      error: { kind: 'ConfigInvalid', family: 'ipv6' },
    });
  });

  it('--probe-port equal to the listener port is a configuration error, for the app and for the proxy', () => {
    expect(plan({ probePort: 4140 })).toMatchObject({ ok: false, error: { kind: 'ConfigInvalid' } });
    expect(plan({ probePort: 15006, spec: PRESETS.istio.spec, identity: ISTIO_PROXY })).toMatchObject({
      ok: false,
      error: { kind: 'ConfigInvalid' },
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

describe('--probe-address-hint: a soft preference, after the documentation ranges', () => {
  const noDefault = (extraRoutes: NonNullable<Parameters<typeof podNetwork>[0]>['extraRoutes']) =>
    podNetwork({ v4: '10.244.1.5/24', extraRoutes });
  const route = (base: bigint, prefix: number) => ({
    family: 'ipv4' as const,
    table: 254,
    type: 'unicast' as const,
    destination: { family: 'ipv4' as const, base, prefix },
    gateway: parseIp('10.244.1.1'),
    outputLinkIndex: 2,
  });

  it('a routed documentation range wins: a fixed hint would let rules that capture only it pass', () => {
    const result = plan({ probeAddressHints: { ipv4: parseIp('203.0.113.77')! } });
    expect(result.ok && formatIp(result.targets[0]!.destination)).toBe('192.0.2.1');
    expect(result.ok && result.notes[0]).toBe(
      'IPv4: probe address 192.0.2.1, drawn at random from the documentation ranges the pod routes; hint 203.0.113.77 not needed',
    );
  });

  it('used when no documentation range is routed and the hint is (air-gapped with a private connect address)', () => {
    const result = plan({ probeAddressHints: { ipv4: parseIp('1.1.1.1')! } }, noDefault([route(0x01000000n, 8)]));
    expect(result.ok && formatIp(result.targets[0]!.destination)).toBe('1.1.1.1');
    expect(result.ok && result.notes[0]).toBe('IPv4: probe address 1.1.1.1 (the probe address hint)');
  });

  it("air-gapped (Linkerd's 1.1.1.1 with no default route): another address, and the log says why", () => {
    const result = plan({ probeAddressHints: { ipv4: parseIp('1.1.1.1')! } }, noDefault([route(0x0a600000n, 12)]));
    expect(result.ok && formatIp(result.targets[0]!.destination)).toBe('10.111.255.254');
    expect(result.ok && result.notes[0]).toBe(
      'IPv4: probe address 10.111.255.254, inside a network the pod routes (no documentation range is routed); hint 1.1.1.1: no route covers it',
    );
  });

  it('a hint that is local is passed over, never used', () => {
    const result = plan({ probeAddressHints: { ipv4: parseIp('127.0.0.1')! } }, noDefault([route(0x0a600000n, 12)]));
    expect(result.ok && formatIp(result.targets[0]!.destination)).toBe('10.111.255.254');
    expect(result.ok && result.notes[0]).toMatch(/hint 127\.0\.0\.1: is a loopback address/);
  });
});

describe('the probe destination: drawn at random from every documentation range the pod routes', () => {
  it('each range can be drawn, and any host in it (never its first or last address)', () => {
    const seen = new Set<string>();
    for (const [first, second] of [
      [0, 0],
      [0.4, 0.5],
      [0.7, 0.999999],
    ] as const) {
      const draws = [first, second];
      const result = plan({ random: () => draws.shift() ?? 0 });
      if (!result.ok) throw new Error(result.error.message);
      seen.add(formatIp(result.targets[0]!.destination));
    }
    expect([...seen]).toEqual(['192.0.2.1', '198.51.100.128', '203.0.113.254']);
    const v6 = plan({ random: () => 0.5 });
    expect(v6.ok && v6.targets.find((target) => target.family === 'ipv6')?.destination).toEqual({
      family: 'ipv6',
      value: 0x20010db8800000000000000000000000n,
    });
  });

  it('a range the configuration excludes is passed over for the next', () => {
    const excluded = plan({ spec: { ...PRESETS.linkerd.spec, excludeOutboundCidrs: [parseCidr('192.0.2.0/24')!] } });
    expect(excluded.ok && formatIp(excluded.targets[0]!.destination)).toBe('198.51.100.1');
  });
});

describe('the spread needs known exclusions', () => {
  it('unknown exclusions: only the first port (the one the mesh guarantees) and the included ports', () => {
    expect(ports(plan({ probeSpread: false }), 'ipv4')).toEqual([20001]);
    expect(ports(plan({ probeSpread: false, probePort: 20001 }), 'ipv6')).toEqual([20001]);
    const included = plan({
      probeSpread: false,
      spec: { ...PRESETS.linkerd.spec, includeOutboundPorts: ports4('3306') },
    });
    expect(ports(included, 'ipv4')).toEqual([20001, 3306]);
    const istio = plan({ spec: PRESETS.istio.spec, identity: ISTIO_PROXY, probeSpread: false });
    expect(ports(istio, 'ipv4')).toEqual([20001]);
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
