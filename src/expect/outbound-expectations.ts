import type { Family } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { InterfaceAtoms } from '../trace/interface-atoms.js';
import { intersectSets, subtractSets, unionSets } from '../trace/interval-set.js';
import { cidrSpan } from '../trace/match-constraint.js';
import type { Region } from '../trace/region.js';
import { ExpectationList, type Expectation } from './expectation.js';
import { acceptedMarkClaims, markedDnsClaims, proxyMarkClaims } from './mark-claims.js';
import {
  addressSet,
  cidrSet,
  ids,
  includedSet,
  interfaces,
  loopbackRange,
  notAddresses,
  notIds,
  notInterfaces,
  portList,
  ports,
} from './spec-sets.js';

/** Istio's inbound passthrough source: the proxy's own connections to the app come from it. */
const PASSTHROUGH_SOURCE: Readonly<Record<Family, bigint>> = { ipv4: 0x7f000006n, ipv6: 6n };

interface Scope {
  readonly spec: InterceptionSpec;
  readonly family: Family;
  readonly atoms: InterfaceAtoms;
  readonly list: ExpectationList;
}

/** The host-loopback destinations of a family: the configured IPv4 range, ::1 for IPv6. */
function hostLoopback(scope: Scope) {
  return scope.family === 'ipv4'
    ? cidrSpan(scope.spec.hostLoopbackCidr.base, scope.spec.hostLoopbackCidr.prefix, 'ipv4')
    : loopbackRange('ipv6');
}

/** What the configuration requires of every TCP (and captured DNS) packet a local socket sends. */
export function outboundExpectations(
  spec: InterceptionSpec,
  family: Family,
  atoms: InterfaceAtoms,
  space: Region,
): Expectation[] {
  const scope: Scope = { spec, family, atoms, list: new ExpectationList(family, 'output', space) };
  const { list } = scope;
  if (spec.excludeInterfaces.length > 0) {
    list.claim(
      'outbound/excluded-interface',
      `interfaces ${spec.excludeInterfaces.join(', ')} are excluded`,
      { iface: interfaces(atoms, spec.excludeInterfaces) },
      { kind: 'not-redirected' },
    );
  }
  list.claim(
    'outbound/impossible',
    'loopback destinations are only reached over lo (no such packet exists)',
    { iface: notInterfaces(atoms, ['lo']), daddr: loopbackRange(family) },
    undefined,
  );
  if (spec.proxyLoopbackToInbound) {
    const source = PASSTHROUGH_SOURCE[family];
    // DNS rules ahead of the passthrough return (Kuma's capture-all) take its UDP DNS to the DNS
    // port: the resolver, never the inbound port, so no loop.
    if (spec.dnsRulesFirst && spec.dnsCapture && spec.dnsPort !== 0)
      list.claim(
        'outbound/passthrough-dns',
        "DNS over loopback from the proxy's passthrough source goes through the DNS rules, which the configuration leaves to the mesh",
        { iface: interfaces(atoms, ['lo']), saddr: [[source, source]], protocols: 2, dport: portList([53]) },
        undefined,
      );
    list.claim(
      'outbound/passthrough-source',
      "loopback traffic from the proxy's inbound passthrough source must not loop back into it",
      { iface: interfaces(atoms, ['lo']), saddr: [[source, source]] },
      { kind: 'not-looped', inboundPort: spec.inboundPort },
    );
  }
  proxyMarkClaims(scope);
  if (spec.dataplane === 'ambient') markedDnsClaims(scope);
  else dnsExpectations(scope);
  acceptedMarkClaims(scope);
  proxyExpectations(scope);
  loopbackExpectations(scope);
  capturedExpectations(scope);
  return list.done('outbound/not-included-address', 'only the included ranges are captured', {
    kind: 'not-redirected',
  });
}

function dnsExpectations({ spec, family, list }: Scope): void {
  if (!spec.dnsCapture || spec.dnsPort === 0) return;
  const servers = spec.dnsCapture.servers;
  if (servers.length > 0 && !servers.some((server) => server.family === family)) return;
  const daddr = servers.length === 0 ? {} : { daddr: addressSet(servers, family) };
  const app = { uid: notIds(spec.proxyUids), gid: notIds(spec.proxyGids) };
  if (spec.dnsRulesFirst)
    list.claim(
      'dns/app-tcp',
      "the application's TCP DNS goes to the DNS port or, as the mesh allows, to its original destination",
      { ...app, ...daddr, protocols: 1, dport: portList([53]) },
      { kind: 'redirect-or-not', port: spec.dnsPort },
    );
  list.claim(
    'dns/app',
    'DNS from the application is captured',
    { ...app, ...daddr, protocols: 3, dport: portList([53]) },
    { kind: 'redirect', port: spec.dnsPort },
  );
}

function proxyExpectations({ spec, family, atoms, list }: Scope & { atoms: InterfaceAtoms }): void {
  const lo = interfaces(atoms, ['lo']);
  const host =
    family === 'ipv4'
      ? cidrSpan(spec.hostLoopbackCidr.base, spec.hostLoopbackCidr.prefix, 'ipv4')
      : loopbackRange('ipv6');
  const first = spec.proxyUids[0];
  if (spec.proxyLoopbackToInbound && first !== undefined) {
    const skipped = unionSets(
      ports(spec.excludeOutboundPorts),
      portList([spec.inboundTunnelPort, ...(spec.dnsCapture ? [53] : [])]),
    );
    list.claim(
      'outbound/proxy-loopback-to-pod',
      `the proxy (uid ${first}) calling its own pod over loopback reaches the inbound port`,
      {
        uid: ids([first]),
        iface: lo,
        protocols: 1,
        daddr: notAddresses(unionSets(loopbackRange(family), host), family),
        dport: subtractSets(ports({ kind: 'all' }), skipped),
      },
      { kind: 'redirect', port: spec.inboundPort },
    );
    // Istio sends only the first uid's loopback calls to the inbound port, and the proxy groups'
    // ones only where its app-loopback RETURN lets them through (TCP to port 53 with DNS capture);
    // whichever it does, anything but the inbound port would loop.
    const because =
      "the proxy's other loopback traffic (other uids and groups, tunnel and DNS ports, other loopback addresses) must not loop back into it";
    const notLooped = { kind: 'not-looped', inboundPort: spec.inboundPort } as const;
    list.claim(
      'outbound/proxy-loopback-other',
      because,
      { uid: ids(spec.proxyUids), iface: lo, daddr: notAddresses(host, family) },
      notLooped,
    );
    list.claim(
      'outbound/proxy-group-loopback',
      because,
      { gid: ids(spec.proxyGids), iface: lo, daddr: notAddresses(host, family) },
      notLooped,
    );
  }
  for (const [key, owners] of [
    ['uid', spec.proxyUids],
    ['gid', spec.proxyGids],
  ] as const)
    for (const id of owners)
      list.claim(
        `outbound/proxy-${key}-${id}`,
        `the proxy's own traffic (${key} ${id}) must not loop back into it`,
        key === 'uid' ? { uid: ids([id]) } : { gid: ids([id]) },
        { kind: 'not-redirected' },
      );
}

function capturedExpectations({ spec, family, list }: Scope): void {
  const redirect = { kind: 'redirect', port: spec.outboundPort } as const;
  list.claim(
    'outbound/excluded-port',
    'excluded outbound ports are not captured',
    { dport: ports(spec.excludeOutboundPorts) },
    { kind: 'not-redirected' },
  );
  if (spec.includeOutboundGids.kind === 'list') {
    list.claim(
      'outbound/not-included-gid',
      'only the included groups are captured',
      { gid: notIds(spec.includeOutboundGids.ids) },
      { kind: 'not-redirected' },
    );
  }
  list.claim(
    'outbound/excluded-gid',
    'excluded groups are not captured',
    { gid: ids(spec.excludeOutboundGids) },
    { kind: 'not-redirected' },
  );
  list.claim(
    'outbound/included-port',
    'included outbound ports are always captured',
    { dport: ports(spec.includeOutboundPorts) },
    redirect,
  );
  list.claim(
    'outbound/excluded-cidr',
    'excluded outbound ranges are not captured',
    { daddr: cidrSet(spec.excludeOutboundCidrs, family) },
    { kind: 'not-redirected' },
  );
  list.claim(
    'outbound/app',
    'outbound TCP from the application is captured',
    { daddr: includedSet(spec.includeOutboundCidrs, family) },
    redirect,
  );
}

/** Loopback stays local, but for the included ranges on it, DNS's own rules and the host loopback. */
function loopbackExpectations(scope: Scope): void {
  if (scope.spec.dnsCapture) {
    scope.list.claim('outbound/other-udp', 'the configuration speaks of UDP only for DNS', { protocols: 2 }, undefined);
    scope.list.claim(
      'outbound/loopback-dns-port',
      'TCP to port 53 over loopback goes through the DNS rules, which the configuration leaves to the mesh',
      { iface: interfaces(scope.atoms, ['lo']), dport: portList([53]) },
      undefined,
    );
  }
  const includedLoopback =
    scope.spec.includeOutboundCidrs.kind === 'list'
      ? intersectSets(includedSet(scope.spec.includeOutboundCidrs, scope.family), loopbackRange(scope.family))
      : [];
  scope.list.claim(
    'outbound/loopback',
    'traffic over loopback stays local',
    { iface: interfaces(scope.atoms, ['lo']), daddr: notAddresses(includedLoopback, scope.family) },
    { kind: 'not-redirected' },
  );
  scope.list.claim(
    'outbound/host-loopback',
    'host-loopback destinations are never redirected',
    { daddr: hostLoopback(scope) },
    { kind: 'not-redirected' },
  );
}
