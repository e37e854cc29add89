import { cidrContains, type Cidr } from '../addr/cidr.js';
import { FAMILY_BITS, formatIp, parseIp, type Family, type IpAddress } from '../addr/ip.js';
import { portSetHas, type PortSet } from '../addr/port-set.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { Packet } from '../trace/packet.js';

/** The answer a packet question must get. */
export type Expected =
  | { readonly kind: 'redirect'; readonly port: number }
  | { readonly kind: 'tproxy'; readonly port: number }
  | { readonly kind: 'not-redirected' }
  | { readonly kind: 'dropped' };

export interface Question {
  /** Stable identifier, e.g. `ipv4/outbound/app`, for tests and machine readers. */
  readonly id: string;
  /** The packet in words: "outbound TCP from uid 1000 to 192.0.2.10:80". */
  readonly description: string;
  /** Which part of the configuration asks for this answer. */
  readonly because: string;
  readonly packet: Packet;
  readonly expected: Expected;
}

export interface QuestionOptions {
  readonly families: readonly Family[];
  /** A routed destination per family (the validator's probe address); defaults are documentation ranges. */
  readonly sampleDestinations?: Partial<Record<Family, IpAddress>>;
}

const DEFAULT_DESTINATIONS: Readonly<Record<Family, readonly string[]>> = {
  ipv4: ['192.0.2.10', '198.51.100.10', '203.0.113.10', '172.16.0.10', '100.64.0.10', '10.1.2.3'],
  ipv6: ['2001:db8:0:1::10', 'fd00:1::10', 'fd12:3456::10', '2606:4700::10'],
};
/** The remote peer of inbound questions. */
const DEFAULT_SOURCES: Readonly<Record<Family, readonly string[]>> = {
  ipv4: ['198.51.100.7', '203.0.113.7', '172.31.0.7', '100.64.0.7'],
  ipv6: ['2001:db8:0:2::7', 'fd00:2::7', 'fd34:5678::7'],
};
/** The pod's own address in questions about traffic that arrives at it. */
const POD_ADDRESSES: Readonly<Record<Family, string>> = { ipv4: '192.0.2.77', ipv6: '2001:db8:0:3::77' };
const DNS_SERVERS: Readonly<Record<Family, string>> = { ipv4: '192.0.2.53', ipv6: '2001:db8:0:4::53' };
const APP_PORTS = [80, 8080, 443, 3000, 5000, 9000, 12345, 23456];
const INTERFACES = ['eth0', 'net1', 'ens3', 'ilk0'];
/** How many ranges of one list get boundary questions: enough for any real annotation. */
const MAX_RANGES = 16;

/**
 * Turns the mesh's intent into packet questions with the answers they must get. Pure: the same
 * spec and options always give the same list, in the same order.
 */
export function buildQuestions(spec: InterceptionSpec, options: QuestionOptions): Question[] {
  const questions: Question[] = [];
  for (const family of options.families) questions.push(...familyQuestions(spec, family, options.sampleDestinations?.[family]));
  return questions;
}

function familyQuestions(spec: InterceptionSpec, family: Family, sample: IpAddress | undefined): Question[] {
  const questions: Question[] = [];
  const add = (id: string, description: string, because: string, packet: Packet, expected: Expected): void => {
    if (!questions.some((question) => question.id === `${family}/${id}`)) questions.push({ id: `${family}/${id}`, description, because, packet, expected });
  };
  const ip = (text: string): IpAddress => parseIp(text) as IpAddress;
  const loopback = (address: IpAddress): boolean =>
    family === 'ipv4' ? cidrContains({ family, base: 0x7f000000n, prefix: 8 }, address) : address.value === 1n;
  const hostLoopback = (address: IpAddress): boolean =>
    family === 'ipv4' ? cidrContains(spec.hostLoopbackCidr, address) : address.value === 1n;
  const appInterface = INTERFACES.find((name) => !spec.excludeInterfaces.includes(name) && !spec.rerouteInterfaces.includes(name)) ?? 'eth0';
  const outboundGidOk = (gid: number): boolean =>
    (spec.includeOutboundGids.kind === 'all' || spec.includeOutboundGids.ids.includes(gid)) && !spec.excludeOutboundGids.includes(gid);
  const appUid = firstFree(1000, spec.proxyUids);
  const appGid =
    spec.includeOutboundGids.kind === 'list'
      ? spec.includeOutboundGids.ids.find((gid) => !spec.proxyGids.includes(gid) && !spec.excludeOutboundGids.includes(gid)) ?? firstFree(1000, spec.proxyGids)
      : firstFree(1000, [...spec.proxyGids, ...spec.excludeOutboundGids]);
  const excludedOutboundCidr = (address: IpAddress): boolean => spec.excludeOutboundCidrs.some((cidr) => cidrContains(cidr, address));
  const includedOutboundCidr = (address: IpAddress): boolean =>
    spec.includeOutboundCidrs.kind === 'all' || spec.includeOutboundCidrs.cidrs.some((cidr) => cidrContains(cidr, address));
  const outboundCaptured = (address: IpAddress, port: number, uid: number, gid: number): boolean => {
    if (spec.proxyUids.includes(uid) || spec.proxyGids.includes(gid)) return false;
    if (hostLoopback(address) || portSetHas(spec.excludeOutboundPorts, port) || !outboundGidOk(gid)) return false;
    // Loopback is only captured when an included range names it explicitly.
    if (loopback(address) && spec.includeOutboundCidrs.kind === 'all') return false;
    return (includedOutboundCidr(address) && !excludedOutboundCidr(address)) || portSetHas(spec.includeOutboundPorts, port);
  };
  const outboundExpected = (address: IpAddress, port: number, uid: number, gid: number): Expected =>
    outboundCaptured(address, port, uid, gid) ? { kind: 'redirect', port: spec.outboundPort } : { kind: 'not-redirected' };
  const reserved = [spec.inboundPort, spec.outboundPort, spec.inboundTunnelPort, spec.dnsPort, 53];
  const outboundPort =
    APP_PORTS.find((port) => !reserved.includes(port) && !portSetHas(spec.excludeOutboundPorts, port) && !portSetHas(spec.includeOutboundPorts, port)) ?? 80;
  const outboundPacket = (destination: IpAddress, port: number, uid: number, gid: number, protocol: 'tcp' | 'udp' = 'tcp', outInterface?: string): Packet => ({
    family,
    hook: 'output',
    protocol,
    source: ip(POD_ADDRESSES[family]),
    destination,
    sourcePort: 40000,
    destinationPort: port,
    uid,
    gid,
    outInterface: outInterface ?? (loopback(destination) ? 'lo' : appInterface),
  });
  const ask = (id: string, because: string, packet: Packet, expected: Expected): void => {
    add(id, describePacket(packet), because, packet, expected);
  };

  // Outbound: a routed destination the configuration wants captured, if there is one.
  const destination = sample ?? pickDestination(spec, family, (address) => includedOutboundCidr(address) && !excludedOutboundCidr(address) && !hostLoopback(address));
  ask('outbound/app', 'outbound TCP from the application is captured', outboundPacket(destination, outboundPort, appUid, appGid), outboundExpected(destination, outboundPort, appUid, appGid));
  // The proxy's exclusion is asked where the application's traffic would be captured (otherwise
  // nothing could loop), and never over loopback: there Istio deliberately sends the proxy's own
  // calls to its inbound port (see proxyLoopbackToInbound).
  const remote = loopback(destination) ? pickDestination(spec, family, (address) => !loopback(address)) : destination;
  const outsideForPorts = pickDestination(spec, family, (address) => !includedOutboundCidr(address) && !excludedOutboundCidr(address) && !loopback(address), true);
  const includedPort = boundaries(spec.includeOutboundPorts).find((port) => !portSetHas(spec.excludeOutboundPorts, port));
  const capturedTargets: Array<[IpAddress, number]> = [[remote, outboundPort]];
  if (includedPort !== undefined) capturedTargets.push([outsideForPorts ?? remote, includedPort]);
  const [proxyTarget, proxyPort] =
    capturedTargets.find(([address, port]) => !loopback(address) && outboundCaptured(address, port, appUid, appGid)) ?? [remote, outboundPort];
  for (const uid of spec.proxyUids) {
    ask(`outbound/proxy-uid-${uid}`, `the proxy's own traffic (uid ${uid}) must not loop back into it`, outboundPacket(proxyTarget, proxyPort, uid, appGid), { kind: 'not-redirected' });
  }
  for (const gid of spec.proxyGids) {
    ask(`outbound/proxy-gid-${gid}`, `the proxy's own traffic (gid ${gid}) must not loop back into it`, outboundPacket(proxyTarget, proxyPort, appUid, gid), { kind: 'not-redirected' });
  }
  for (const port of boundaries(spec.excludeOutboundPorts)) {
    ask(`outbound/excluded-port-${port}`, `outbound port ${port} is excluded`, outboundPacket(destination, port, appUid, appGid), outboundExpected(destination, port, appUid, appGid));
  }
  const outside = pickDestination(spec, family, (address) => !includedOutboundCidr(address) && !excludedOutboundCidr(address) && !loopback(address), true);
  for (const port of boundaries(spec.includeOutboundPorts)) {
    const target = outside ?? destination;
    ask(`outbound/included-port-${port}`, `outbound port ${port} is always captured`, outboundPacket(target, port, appUid, appGid), outboundExpected(target, port, appUid, appGid));
  }
  if (outside && spec.includeOutboundCidrs.kind === 'list') {
    ask('outbound/not-included-address', `only ${spec.includeOutboundCidrs.cidrs.length} included range(s) are captured`, outboundPacket(outside, outboundPort, appUid, appGid), outboundExpected(outside, outboundPort, appUid, appGid));
  }
  if (spec.includeOutboundCidrs.kind === 'list') {
    for (const cidr of spec.includeOutboundCidrs.cidrs.filter((c) => c.family === family).slice(0, MAX_RANGES)) {
      const inside = addressInside(cidr, (address) => !hostLoopback(address));
      if (inside) ask(`outbound/included-cidr-${formatIp(inside)}`, `included range ${formatIp({ family, value: cidr.base })}/${cidr.prefix} is captured`, outboundPacket(inside, outboundPort, appUid, appGid), outboundExpected(inside, outboundPort, appUid, appGid));
    }
  }
  for (const cidr of spec.excludeOutboundCidrs.filter((c) => c.family === family).slice(0, MAX_RANGES)) {
    const inside = addressInside(cidr, () => true);
    if (inside) ask(`outbound/excluded-cidr-${formatIp(inside)}`, `excluded range ${formatIp({ family, value: cidr.base })}/${cidr.prefix} is not captured`, outboundPacket(inside, outboundPort, appUid, appGid), outboundExpected(inside, outboundPort, appUid, appGid));
  }
  for (const gid of spec.excludeOutboundGids) {
    ask(`outbound/excluded-gid-${gid}`, `group ${gid} is excluded`, outboundPacket(destination, outboundPort, appUid, gid), { kind: 'not-redirected' });
  }
  if (spec.includeOutboundGids.kind === 'list') {
    const other = firstFree(4242, [...spec.includeOutboundGids.ids, ...spec.proxyGids]);
    ask(`outbound/not-included-gid-${other}`, 'only the included groups are captured', outboundPacket(destination, outboundPort, appUid, other), outboundExpected(destination, outboundPort, appUid, other));
  }
  const localhost = ip(family === 'ipv4' ? '127.0.0.1' : '::1');
  ask('outbound/localhost', 'traffic to localhost stays local', outboundPacket(localhost, outboundPort, appUid, appGid), outboundExpected(localhost, outboundPort, appUid, appGid));
  const firstProxyUid = spec.proxyUids[0];
  if (spec.proxyLoopbackToInbound && firstProxyUid !== undefined) {
    const pod = ip(POD_ADDRESSES[family]);
    const port = inboundSamplePort(spec) ?? 8080;
    ask(
      'outbound/proxy-loopback-to-pod',
      `the proxy (uid ${firstProxyUid}) calling its own pod over loopback reaches the inbound port`,
      outboundPacket(pod, port, firstProxyUid, appGid, 'tcp', 'lo'),
      { kind: 'redirect', port: spec.inboundPort },
    );
  }

  // Inbound.
  const source = pickFrom(DEFAULT_SOURCES[family], (address) => !spec.excludeInboundCidrs.some((cidr) => cidrContains(cidr, address))) ?? ip(DEFAULT_SOURCES[family][0] as string);
  const pod = ip(POD_ADDRESSES[family]);
  const inboundCaptured = (port: number, from: IpAddress, inInterface: string): boolean =>
    !spec.excludeInterfaces.includes(inInterface) &&
    !spec.rerouteInterfaces.includes(inInterface) &&
    !spec.excludeInboundCidrs.some((cidr) => cidrContains(cidr, from)) &&
    // In TPROXY mode Istio diverts the tunnel port too (its mangle rules carry no exception for it).
    (spec.tproxy || port !== spec.inboundTunnelPort) &&
    !portSetHas(spec.excludeInboundPorts, port) &&
    portSetHas(spec.includeInboundPorts, port);
  const inboundExpected = (port: number, from: IpAddress, inInterface: string): Expected =>
    !inboundCaptured(port, from, inInterface) ? { kind: 'not-redirected' } : spec.tproxy ? { kind: 'tproxy', port: spec.inboundPort } : { kind: 'redirect', port: spec.inboundPort };
  const inboundPacket = (port: number, from: IpAddress, inInterface: string, ctState: Packet['ctState'] = 'new'): Packet => ({
    family,
    hook: 'prerouting',
    protocol: 'tcp',
    source: from,
    destination: pod,
    sourcePort: 40000,
    destinationPort: port,
    inInterface,
    ctState,
  });
  const askInbound = (id: string, because: string, port: number, from: IpAddress = source, inInterface: string = appInterface): void =>
    ask(`inbound/${id}`, because, inboundPacket(port, from, inInterface), inboundExpected(port, from, inInterface));
  const inboundPort = inboundSamplePort(spec);
  askInbound('app', 'inbound TCP to an application port is captured', inboundPort ?? 8080);
  for (const port of boundaries(spec.excludeInboundPorts)) askInbound(`excluded-port-${port}`, `inbound port ${port} is excluded`, port);
  if (spec.inboundTunnelPort !== 0 && !spec.tproxy) askInbound(`tunnel-port-${spec.inboundTunnelPort}`, `the inbound tunnel port ${spec.inboundTunnelPort} is not captured`, spec.inboundTunnelPort);
  for (const port of boundaries(spec.includeInboundPorts)) askInbound(`included-port-${port}`, `inbound port ${port} is included`, port);
  if (spec.includeInboundPorts.kind === 'ranges' && spec.includeInboundPorts.ranges.length > 0) {
    const other = APP_PORTS.find((port) => !portSetHas(spec.includeInboundPorts, port) && !reserved.includes(port));
    if (other !== undefined) askInbound(`not-included-port-${other}`, 'only the included inbound ports are captured', other);
  }
  for (const cidr of spec.excludeInboundCidrs.filter((c) => c.family === family).slice(0, MAX_RANGES)) {
    const inside = addressInside(cidr, () => true);
    if (inside) askInbound(`excluded-source-${formatIp(inside)}`, `inbound from ${formatIp({ family, value: cidr.base })}/${cidr.prefix} is not captured`, inboundPort ?? 8080, inside);
  }
  for (const name of spec.excludeInterfaces) {
    askInbound(`excluded-interface-${name}`, `interface ${name} is excluded`, inboundPort ?? 8080, source, name);
    ask(`outbound/excluded-interface-${name}`, `interface ${name} is excluded`, outboundPacket(destination, outboundPort, appUid, appGid, 'tcp', name), { kind: 'not-redirected' });
  }
  // Traffic arriving from a virtual interface (a VM behind the pod) is outbound traffic: it goes to
  // the outbound port when its destination is in the included ranges (exclusions are not applied
  // to it by Istio's rule writer), and is otherwise left alone.
  for (const name of spec.rerouteInterfaces) {
    const packet: Packet = { ...inboundPacket(outboundPort, source, name), destination };
    const rerouted = includedOutboundCidr(destination) && !loopback(destination);
    ask(
      `inbound/rerouted-interface-${name}`,
      rerouted ? `TCP arriving on virtual interface ${name} for an included range goes to the outbound port` : `TCP arriving on virtual interface ${name} outside the included ranges is left alone`,
      packet,
      rerouted ? { kind: 'redirect', port: spec.outboundPort } : { kind: 'not-redirected' },
    );
  }
  if (spec.dropInvalid) {
    ask('inbound/invalid-dropped', 'packets in conntrack state INVALID are dropped', inboundPacket(inboundPort ?? 8080, source, appInterface, 'invalid'), { kind: 'dropped' });
  }

  // DNS.
  if (spec.dnsCapture && spec.dnsPort !== 0) {
    const servers = spec.dnsCapture.servers.filter((server) => server.family === family);
    const targets = spec.dnsCapture.servers.length === 0 ? [ip(DNS_SERVERS[family])] : servers;
    for (const server of targets.slice(0, MAX_RANGES)) {
      for (const protocol of ['udp', 'tcp'] as const) {
        ask(`dns/${protocol}-${formatIp(server)}`, 'DNS from the application is captured', outboundPacket(server, 53, appUid, appGid, protocol), { kind: 'redirect', port: spec.dnsPort });
      }
      if (firstProxyUid !== undefined) {
        ask(`dns/proxy-${formatIp(server)}`, "the proxy's own DNS must not loop back into it", outboundPacket(server, 53, firstProxyUid, appGid, 'udp'), { kind: 'not-redirected' });
      }
    }
  }
  return questions;
}

export function describePacket(packet: Packet): string {
  const address = (ip: IpAddress, port: number): string => (ip.family === 'ipv6' ? `[${formatIp(ip)}]:${port}` : `${formatIp(ip)}:${port}`);
  const protocol = packet.protocol.toUpperCase();
  if (packet.hook === 'output') {
    const owner = `uid ${packet.uid ?? '?'} gid ${packet.gid ?? '?'}`;
    return `outbound ${protocol} from ${owner} to ${address(packet.destination, packet.destinationPort)} via ${packet.outInterface ?? '?'}`;
  }
  const state = packet.ctState && packet.ctState !== 'new' ? ` (conntrack ${packet.ctState.toUpperCase()})` : '';
  return `inbound ${protocol} from ${formatIp(packet.source)} on ${packet.inInterface ?? '?'} to ${address(packet.destination, packet.destinationPort)}${state}`;
}

function inboundSamplePort(spec: InterceptionSpec): number | undefined {
  const reserved = [spec.inboundPort, spec.outboundPort, spec.inboundTunnelPort, spec.dnsPort, 53];
  const usable = (port: number): boolean => !reserved.includes(port) && !portSetHas(spec.excludeInboundPorts, port);
  if (spec.includeInboundPorts.kind === 'ranges') {
    for (const range of spec.includeInboundPorts.ranges) {
      for (let port = range.from; port <= range.to && port <= range.from + 64; port++) if (usable(port)) return port;
    }
    return undefined;
  }
  return APP_PORTS.find(usable);
}

function firstFree(start: number, taken: readonly number[]): number {
  let id = start;
  while (taken.includes(id)) id++;
  return id;
}

function pickFrom(candidates: readonly string[], ok: (address: IpAddress) => boolean): IpAddress | undefined {
  for (const text of candidates) {
    const address = parseIp(text);
    if (address && ok(address)) return address;
  }
  return undefined;
}

function pickDestination(spec: InterceptionSpec, family: Family, ok: (address: IpAddress) => boolean): IpAddress;
function pickDestination(spec: InterceptionSpec, family: Family, ok: (address: IpAddress) => boolean, optional: true): IpAddress | undefined;
function pickDestination(spec: InterceptionSpec, family: Family, ok: (address: IpAddress) => boolean, optional?: true): IpAddress | undefined {
  const fromDefaults = pickFrom(DEFAULT_DESTINATIONS[family], ok);
  if (fromDefaults) return fromDefaults;
  if (spec.includeOutboundCidrs.kind === 'list') {
    for (const cidr of spec.includeOutboundCidrs.cidrs) {
      if (cidr.family !== family) continue;
      const inside = addressInside(cidr, ok);
      if (inside) return inside;
    }
  }
  if (optional) return undefined;
  // Nothing is meant to be captured: ask about a default address, which must then be left alone.
  return parseIp(DEFAULT_DESTINATIONS[family][0] as string) as IpAddress;
}

/** A host address inside the network, avoiding the network address itself where there is room. */
function addressInside(cidr: Cidr, ok: (address: IpAddress) => boolean): IpAddress | undefined {
  const size = 1n << BigInt(FAMILY_BITS[cidr.family] - cidr.prefix);
  for (const offset of [1n, 2n, 3n, 10n, 0n]) {
    if (offset >= size) continue;
    const address: IpAddress = { family: cidr.family, value: cidr.base + offset };
    if (ok(address)) return address;
  }
  return undefined;
}

/** First and last port of each range: where off-by-one mistakes live. */
function boundaries(set: PortSet): number[] {
  if (set.kind === 'all') return [];
  const ports: number[] = [];
  for (const range of set.ranges.slice(0, MAX_RANGES)) {
    if (!ports.includes(range.from)) ports.push(range.from);
    if (!ports.includes(range.to)) ports.push(range.to);
  }
  return ports;
}
