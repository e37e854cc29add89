import { describe, expect, it } from 'vitest';
import { formatIp, parseIp } from '../../src/addr/ip.js';
import { parsePortSet } from '../../src/addr/port-set.js';
import { PRESETS, type InterceptionSpec } from '../../src/config/interception.js';
import { assessPodNetwork } from '../../src/network/assess-pod-network.js';
import type { PodNetwork } from '../../src/network/pod-network.js';
import {
  planProbes,
  type PlanInput,
  type ProbeIdentity,
  type ProbePlan,
  type ProbeTarget,
} from '../../src/probe/probe-plan.js';
import { extraRoute, podNetwork } from './pod-network-fixtures.js';

const APP: ProbeIdentity = { uid: 1000, gid: 1000, groups: [] };

const RANDOM_PORT = 40123;

function plan(
  network: PodNetwork,
  spec: InterceptionSpec = PRESETS.linkerd.spec,
  identity = APP,
  overrides = {},
  extra: Partial<PlanInput> = {},
): ProbePlan {
  return planProbes({
    spec,
    network,
    assessment: assessPodNetwork(network, 'auto'),
    identity,
    probeAddresses: overrides,
    probeAddressHints: {},
    probePort: undefined,
    randomPort: RANDOM_PORT,
    probeSpread: true,
    random: () => 0,
    ...extra,
  });
}

function describe1(target: ProbeTarget): string {
  return `${target.family} ${target.path} ${formatIp(target.destination)}:${target.port}->${target.expectedPort}`;
}

/** The first target of each family: where the family's probe goes and on which first port. */
function targets(result: ProbePlan): string[] {
  if (!result.ok) throw new Error(result.error.message);
  const firsts = new Map<string, ProbeTarget>();
  for (const target of result.targets) if (!firsts.has(target.family)) firsts.set(target.family, target);
  return [...firsts.values()].map(describe1);
}

describe('choosing where the probe goes', () => {
  it('a default route: a documentation address, one probe per family', () => {
    const network = podNetwork({
      v4: '10.244.1.5/24',
      default4: '10.244.1.1',
      v6: 'fd00:1::5/64',
      default6: 'fd00:1::1',
    });
    expect(targets(plan(network))).toEqual([
      'ipv4 outbound 192.0.2.1:20001->4140',
      'ipv6 outbound 2001:db8::1:20001->4140',
    ]);
  });

  it("never a documentation address on the pod's own subnet (it may be a live neighbour)", () => {
    const network = podNetwork({ v4: '192.0.2.2/24', default4: '192.0.2.1' });
    expect(targets(plan(network))).toEqual(['ipv4 outbound 198.51.100.1:20001->4140']);
  });

  it('air-gapped: no default route, an address inside a routed network behind a gateway', () => {
    const network = podNetwork({ v4: '10.244.1.5/24', extraRoutes: [extraRoute('10.96.0.0/12', '10.244.1.1')] });
    expect(targets(plan(network))).toEqual(['ipv4 outbound 10.111.255.254:20001->4140']);
  });

  it('only on-link routes: unroutable, asking for --probe-address', () => {
    const result = plan(podNetwork({ v4: '10.244.1.5/24' }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ kind: 'ProbeUnroutable', family: 'ipv4' });
    if (!result.ok) expect(result.error.message).toMatch(/on the pod's own subnet 10\.244\.1\.5\/24.*--probe-address/);
  });

  it('respects --include-outbound-cidrs and --exclude-outbound-cidrs', () => {
    const network = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    const spec: InterceptionSpec = {
      ...PRESETS.istio.spec,
      includeOutboundCidrs: { kind: 'list', cidrs: [{ family: 'ipv4', base: 0x0a000000n, prefix: 8 }] },
    };
    // 192.0.2.1 is not captured by an include list of 10/8; an address inside it is chosen instead.
    expect(targets(plan(network, spec))).toEqual(['ipv4 outbound 10.255.255.254:20001->15001']);
    const excluded: InterceptionSpec = {
      ...PRESETS.linkerd.spec,
      excludeOutboundCidrs: [{ family: 'ipv4', base: 0xc0000200n, prefix: 24 }],
    };
    expect(targets(plan(network, excluded))).toEqual(['ipv4 outbound 198.51.100.1:20001->4140']);
  });

  it('a port-limited capture (Istio includeOutboundPorts only) probes an included port', () => {
    const network = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    const ports = parsePortSet('32000,31000');
    if (!ports.ok) throw new Error('ports');
    const spec: InterceptionSpec = {
      ...PRESETS.istio.spec,
      includeOutboundCidrs: { kind: 'list', cidrs: [] },
      includeOutboundPorts: ports.value,
    };
    expect(targets(plan(network, spec))).toEqual(['ipv4 outbound 192.0.2.1:32000->15001']);
  });

  it('an excluded probe port is skipped', () => {
    const network = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    const ports = parsePortSet('20001');
    if (!ports.ok) throw new Error('ports');
    expect(targets(plan(network, { ...PRESETS.linkerd.spec, excludeOutboundPorts: ports.value }))).toEqual([
      'ipv4 outbound 192.0.2.1:20002->4140',
    ]);
  });

  it("as Istio's proxy uid: the pod's own address, expected at the inbound port", () => {
    const network = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    expect(targets(plan(network, PRESETS.istio.spec, { uid: 1337, gid: 1337, groups: [] }))).toEqual([
      'ipv4 proxy-loopback 10.244.1.5:20001->15006',
    ]);
  });

  it("as Istio's proxy uid that may switch: the app path too, as an identity the rules capture", () => {
    const network = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    const spec: InterceptionSpec = { ...PRESETS.istio.spec, excludeOutboundGids: [65534] };
    const result = plan(network, spec, { uid: 1337, gid: 1337, groups: [], canSwitch: true });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.unprobed).toEqual([]);
    const app = result.targets.filter((target) => target.path === 'outbound');
    expect(app.length).toBeGreaterThan(0);
    // Never the proxy's uid, never a group the rules exclude.
    for (const target of app) expect(target.as).toEqual({ uid: 65534, gid: 65533 });
    expect(result.targets.filter((target) => target.path === 'proxy-loopback' && target.as)).toEqual([]);
  });

  it("as Istio's proxy uid that may not switch: the app path is named unprobed, never planned", () => {
    const network = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    const result = plan(network, PRESETS.istio.spec, { uid: 1337, gid: 1337, groups: [] });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.targets.map((target) => target.path)).not.toContain('outbound');
    expect(result.unprobed.map((path) => path.path)).toEqual(['outbound']);
  });

  it("as another uid that may switch, Istio's proxy-loopback path is probed as the proxy uid", () => {
    const network = podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' });
    const result = plan(network, PRESETS.istio.spec, { ...APP, canSwitch: true });
    if (!result.ok) throw new Error(result.error.message);
    const loopback = result.targets.filter((target) => target.path === 'proxy-loopback');
    expect(loopback.length).toBeGreaterThan(0);
    for (const target of loopback) expect(target.as).toEqual({ uid: 1337, gid: 1337 });
  });

  it("as Linkerd's proxy uid: a configuration problem, never a plan", () => {
    const result = plan(podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' }), PRESETS.linkerd.spec, {
      uid: 2102,
      gid: 2102,
      groups: [],
    });
    expect(result.ok ? 'ok' : result.error.kind).toBe('ProbeIdentityExcluded');
  });

  it('a group outside --include-outbound-gids cannot prove capture', () => {
    const spec: InterceptionSpec = { ...PRESETS.istio.spec, includeOutboundGids: { kind: 'list', ids: [1001] } };
    const result = plan(podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' }), spec);
    expect(result.ok ? 'ok' : result.error.kind).toBe('ProbeIdentityExcluded');
    expect(
      targets(
        plan(podNetwork({ v4: '10.244.1.5/24', default4: '10.244.1.1' }), spec, { uid: 1000, gid: 5, groups: [1001] }),
      ),
    ).toHaveLength(1);
  });

  it('an operator --probe-address that is not routed is reported as such', () => {
    const result = plan(podNetwork({ v4: '10.244.1.5/24' }), PRESETS.linkerd.spec, APP, {
      ipv4: parseIp('172.16.0.1'),
    });
    expect(result.ok ? 'ok' : result.error.message).toMatch(/172\.16\.0\.1: no route covers it/);
  });
});

describe('assessing the pod network', () => {
  it('auto proves every usable family and only those', () => {
    expect(assessPodNetwork(podNetwork({ v4: '10.0.0.2/24', default4: '10.0.0.1' }), 'auto').familiesToProve).toEqual([
      'ipv4',
    ]);
    expect(assessPodNetwork(podNetwork({ v6: 'fd00::2/64', default6: 'fd00::1' }), 'auto').familiesToProve).toEqual([
      'ipv6',
    ]);
  });

  it('dual requires both', () => {
    const assessment = assessPodNetwork(podNetwork({ v4: '10.0.0.2/24', default4: '10.0.0.1' }), 'dual');
    expect(assessment.problems).toEqual(['IPv6: no global address on any up, non-loopback interface']);
  });

  it('no address at all, an interface down, a tentative IPv6 address', () => {
    expect(assessPodNetwork(podNetwork({}), 'auto').problems[0]).toMatch(/no family is usable/);
    expect(
      assessPodNetwork(podNetwork({ v4: '10.0.0.2/24', default4: '10.0.0.1', eth0Up: false }), 'auto').problems,
    ).toHaveLength(1);
    expect(
      assessPodNetwork(podNetwork({ v6: 'fd00::2/64', default6: 'fd00::1', tentative6: true }), 'ipv6').problems[0],
    ).toMatch(/tentative/);
  });
});
