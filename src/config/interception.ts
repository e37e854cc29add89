import { parseCidr, type Cidr } from '../addr/cidr.js';
import { parseIp, type IpAddress } from '../addr/ip.js';
import { ALL_PORTS, NO_PORTS, parsePortSet, type PortSet } from '../addr/port-set.js';
import { configError, isConfigError, type ConfigError } from './config-error.js';
import type { FlagSpec } from './flag-spec.js';
import { parseBoolean, type RawOption, type RawOptions } from './raw-options.js';

export type Mesh = 'linkerd' | 'istio' | 'generic';
export const MESHES: readonly Mesh[] = ['linkerd', 'istio', 'generic'];

/** `all`, or an explicit list (empty meaning none). */
export type CidrSet = { readonly kind: 'all' } | { readonly kind: 'list'; readonly cidrs: readonly Cidr[] };
export type IdSet = { readonly kind: 'all' } | { readonly kind: 'list'; readonly ids: readonly number[] };

/**
 * What the mesh intends its capture rules to do. Every field is data the expectations are derived
 * from; a preset fills it, flags replace single fields.
 */
export interface InterceptionSpec {
  readonly mesh: Mesh;
  /** Port the proxy accepts redirected inbound connections on (Linkerd 4143, Istio 15006). */
  readonly inboundPort: number;
  /** Port the proxy accepts redirected outbound connections on (Linkerd 4140, Istio 15001). */
  readonly outboundPort: number;
  /** The proxy's uids, whose outbound traffic must never be redirected (that would loop). */
  readonly proxyUids: readonly number[];
  readonly proxyGids: readonly number[];
  readonly includeInboundPorts: PortSet;
  readonly excludeInboundPorts: PortSet;
  /** Inbound connections from these sources are not redirected (Linkerd's --subnets-to-ignore). */
  readonly excludeInboundCidrs: readonly Cidr[];
  /** Destinations whose outbound TCP must be redirected (Istio includeOutboundIPRanges; `*` = all). */
  readonly includeOutboundCidrs: CidrSet;
  readonly excludeOutboundCidrs: readonly Cidr[];
  /** Ports always redirected outbound, even outside includeOutboundCidrs (Istio includeOutboundPorts). */
  readonly includeOutboundPorts: PortSet;
  readonly excludeOutboundPorts: PortSet;
  /** Only traffic of these groups is captured outbound (Istio OwnerGroupsInclude; `*` = all). */
  readonly includeOutboundGids: IdSet;
  readonly excludeOutboundGids: readonly number[];
  /** Interfaces whose traffic the mesh leaves alone in both directions. */
  readonly excludeInterfaces: readonly string[];
  /** Inbound capture by TPROXY in mangle instead of REDIRECT in nat. */
  readonly tproxy: boolean;
  /** DNS to these servers (or, empty, to any server) is captured; undefined when DNS is not captured. */
  readonly dnsCapture: { readonly servers: readonly IpAddress[] } | undefined;
  /** Port the proxy's DNS resolver listens on for captured DNS (Istio 15053; 0 = none). */
  readonly dnsPort: number;
  /** Port of the mesh's inbound tunnel (Istio HBONE 15008; 0 = none): never redirected inbound. */
  readonly inboundTunnelPort: number;
  /** Destinations the host treats as its own loopback, never redirected (Istio HostIPv4LoopbackCidr; ::1 always). */
  readonly hostLoopbackCidr: Cidr;
  /** Interfaces whose arriving traffic is sent to the OUTBOUND port (Istio RerouteVirtualInterfaces, KubeVirt). */
  readonly rerouteInterfaces: readonly string[];
  /**
   * The proxy's own TCP over loopback to a non-loopback address of the pod goes to the inbound port
   * (Istio: the sidecar calling its own pod IP, and how istio-validation proves capture).
   */
  readonly proxyLoopbackToInbound: boolean;
  /** Connections in conntrack state INVALID are dropped on the way in (Istio DropInvalid / INVALID_DROP). */
  readonly dropInvalid: boolean;
}

export interface MeshPreset {
  readonly spec: InterceptionSpec;
  readonly failureExitCode: number;
}

// The istio-cni / sidecar-injector defaults; 15008 (the HBONE tunnel) is inboundTunnelPort.
const ISTIO_EXCLUDED_INBOUND = parsedPorts('15020,15021,15090');
const LOOPBACK_HOST = parsedCidr('127.0.0.1/32');

/** What a mesh does unless its preset says otherwise: capture everything, exclude nothing. */
const CAPTURE_ALL: Omit<InterceptionSpec, 'mesh' | 'inboundPort' | 'outboundPort'> = {
  proxyUids: [],
  proxyGids: [],
  includeInboundPorts: ALL_PORTS,
  excludeInboundPorts: NO_PORTS,
  excludeInboundCidrs: [],
  includeOutboundCidrs: { kind: 'all' },
  excludeOutboundCidrs: [],
  includeOutboundPorts: NO_PORTS,
  excludeOutboundPorts: NO_PORTS,
  includeOutboundGids: { kind: 'all' },
  excludeOutboundGids: [],
  excludeInterfaces: [],
  tproxy: false,
  dnsCapture: undefined,
  dnsPort: 0,
  inboundTunnelPort: 0,
  hostLoopbackCidr: LOOPBACK_HOST,
  rerouteInterfaces: [],
  proxyLoopbackToInbound: false,
  dropInvalid: false,
};

export const PRESETS: Readonly<Record<Mesh, MeshPreset>> = {
  linkerd: {
    failureExitCode: 95,
    spec: {
      ...CAPTURE_ALL,
      mesh: 'linkerd',
      inboundPort: 4143,
      outboundPort: 4140,
      proxyUids: [2102],
      excludeInboundPorts: parsedPorts('4190,4191'),
    },
  },
  istio: {
    failureExitCode: 126,
    spec: {
      ...CAPTURE_ALL,
      mesh: 'istio',
      inboundPort: 15006,
      outboundPort: 15001,
      proxyUids: [1337],
      proxyGids: [1337],
      excludeInboundPorts: ISTIO_EXCLUDED_INBOUND,
      excludeOutboundPorts: parsedPorts('15020'),
      dnsPort: 15053,
      inboundTunnelPort: 15008,
      proxyLoopbackToInbound: true,
    },
  },
  // Generic has no ports of its own: --inbound-port and --outbound-port are required.
  generic: {
    failureExitCode: 97,
    spec: { ...CAPTURE_ALL, mesh: 'generic', inboundPort: 0, outboundPort: 0 },
  },
};

function parsedCidr(text: string): Cidr {
  const cidr = parseCidr(text);
  if (!cidr) throw new Error(`preset CIDR ${text} does not parse`);
  return cidr;
}

function parsedPorts(text: string): PortSet {
  const parsed = parsePortSet(text);
  if (!parsed.ok) throw new Error(`preset port list ${text}: ${parsed.problem}`);
  return parsed.value;
}

export const INTERCEPTION_FLAGS: readonly FlagSpec[] = [
  { name: 'mesh', arity: 'value', placeholder: 'linkerd|istio|generic', help: 'Preset for every value below (default generic).' },
  { name: 'inbound-port', arity: 'value', placeholder: 'PORT', help: "Proxy's inbound redirect port (linkerd 4143, istio 15006)." },
  { name: 'outbound-port', arity: 'value', placeholder: 'PORT', help: "Proxy's outbound redirect port (linkerd 4140, istio 15001)." },
  { name: 'proxy-uid', arity: 'value', placeholder: 'UID[,UID]', help: "The proxy's uid(s): their traffic must not be redirected (linkerd 2102, istio 1337)." },
  { name: 'proxy-gid', arity: 'value', placeholder: 'GID[,GID]', help: "The proxy's gid(s), likewise (istio 1337; linkerd none)." },
  { name: 'include-inbound-ports', arity: 'value', placeholder: 'PORTS', help: 'Inbound ports that must be redirected; * for all (default), empty for none.' },
  { name: 'exclude-inbound-ports', arity: 'value', placeholder: 'PORTS', help: 'Inbound ports that must not be redirected.' },
  { name: 'exclude-inbound-cidrs', arity: 'value', placeholder: 'CIDRS', help: 'Source networks whose inbound traffic must not be redirected.' },
  { name: 'include-outbound-cidrs', arity: 'value', placeholder: 'CIDRS', help: 'Destinations whose outbound TCP must be redirected; * for all (default), empty for none.' },
  { name: 'exclude-outbound-cidrs', arity: 'value', placeholder: 'CIDRS', help: 'Destinations whose outbound traffic must not be redirected.' },
  { name: 'include-outbound-ports', arity: 'value', placeholder: 'PORTS', help: 'Destination ports redirected outbound whatever the address.' },
  { name: 'exclude-outbound-ports', arity: 'value', placeholder: 'PORTS', help: 'Destination ports that must not be redirected outbound.' },
  { name: 'include-outbound-gids', arity: 'value', placeholder: 'GIDS', help: 'Only these groups are captured outbound; * for all (default).' },
  { name: 'exclude-outbound-gids', arity: 'value', placeholder: 'GIDS', help: 'Groups whose outbound traffic must not be captured.' },
  { name: 'exclude-interfaces', arity: 'value', placeholder: 'IFACES', help: 'Interfaces the mesh leaves alone in both directions.' },
  { name: 'tproxy', arity: 'switch', help: 'Inbound capture is TPROXY (mangle) instead of REDIRECT (nat).' },
  { name: 'dns-capture', arity: 'optional', placeholder: 'SERVERS', help: 'DNS is captured; with =SERVERS only to those server addresses.' },
  { name: 'dns-port', arity: 'value', placeholder: 'PORT', help: "Port captured DNS is redirected to (istio 15053); 0 for none." },
  { name: 'inbound-tunnel-port', arity: 'value', placeholder: 'PORT', help: "Inbound tunnel port that is never redirected (istio 15008); 0 for none." },
  { name: 'host-loopback-cidr', arity: 'value', placeholder: 'CIDR', help: 'IPv4 destinations treated as the host loopback, never redirected (default 127.0.0.1/32).' },
  { name: 'reroute-interfaces', arity: 'value', placeholder: 'IFACES', help: 'Interfaces whose arriving TCP goes to the outbound port (istio rerouteVirtualInterfaces / kubevirtInterfaces).' },
  { name: 'proxy-loopback-inbound', arity: 'switch', help: "The proxy uid's loopback TCP to the pod's own address goes to the inbound port (istio default true)." },
  { name: 'drop-invalid', arity: 'switch', help: 'Inbound packets in conntrack state INVALID are dropped (istio INVALID_DROP).' },
];

/** Builds the spec from the preset named by --mesh, replacing each field a flag gives. */
export function buildInterceptionSpec(raw: RawOptions): InterceptionSpec | ConfigError {
  const meshOption = raw.get('mesh');
  const meshText = meshOption?.value.trim() || 'generic';
  if (!MESHES.includes(meshText as Mesh)) {
    return configError(meshOption?.source ?? '--mesh', meshText, `expected one of ${MESHES.join(', ')}`);
  }
  const mesh = meshText as Mesh;
  const preset = PRESETS[mesh].spec;
  const spec: { -readonly [K in keyof InterceptionSpec]: InterceptionSpec[K] } = { ...preset };

  const steps: Array<[string, (option: RawOption) => ConfigError | undefined]> = [
    ['inbound-port', (o) => assign(parsePort(o), (v) => (spec.inboundPort = v))],
    ['outbound-port', (o) => assign(parsePort(o), (v) => (spec.outboundPort = v))],
    ['proxy-uid', (o) => assign(parseIds(o), (v) => (spec.proxyUids = v))],
    ['proxy-gid', (o) => assign(parseIds(o), (v) => (spec.proxyGids = v))],
    ['include-inbound-ports', (o) => assign(parsePorts(o), (v) => (spec.includeInboundPorts = v))],
    ['exclude-inbound-ports', (o) => assign(parsePorts(o), (v) => (spec.excludeInboundPorts = v))],
    ['exclude-inbound-cidrs', (o) => assign(parseCidrs(o), (v) => (spec.excludeInboundCidrs = v))],
    ['include-outbound-cidrs', (o) => assign(parseCidrSet(o), (v) => (spec.includeOutboundCidrs = v))],
    ['exclude-outbound-cidrs', (o) => assign(parseCidrs(o), (v) => (spec.excludeOutboundCidrs = v))],
    ['include-outbound-ports', (o) => assign(parsePorts(o), (v) => (spec.includeOutboundPorts = v))],
    ['exclude-outbound-ports', (o) => assign(parsePorts(o), (v) => (spec.excludeOutboundPorts = v))],
    ['include-outbound-gids', (o) => assign(parseIdSet(o), (v) => (spec.includeOutboundGids = v))],
    ['exclude-outbound-gids', (o) => assign(parseIds(o), (v) => (spec.excludeOutboundGids = v))],
    ['exclude-interfaces', (o) => assign(parseInterfaces(o), (v) => (spec.excludeInterfaces = v))],
    ['tproxy', (o) => assign(parseBoolean(o), (v) => (spec.tproxy = v))],
    ['dns-capture', (o) => assign(parseDnsCapture(o), (v) => (spec.dnsCapture = v))],
    ['dns-port', (o) => assign(parsePortOrZero(o), (v) => (spec.dnsPort = v))],
    ['inbound-tunnel-port', (o) => assign(parsePortOrZero(o), (v) => (spec.inboundTunnelPort = v))],
    ['host-loopback-cidr', (o) => assign(parseLoopbackCidr(o), (v) => (spec.hostLoopbackCidr = v))],
    ['reroute-interfaces', (o) => assign(parseInterfaces(o), (v) => (spec.rerouteInterfaces = v))],
    ['proxy-loopback-inbound', (o) => assign(parseBoolean(o), (v) => (spec.proxyLoopbackToInbound = v))],
    ['drop-invalid', (o) => assign(parseBoolean(o), (v) => (spec.dropInvalid = v))],
  ];
  for (const [name, step] of steps) {
    const option = raw.get(name);
    if (!option) continue;
    const error = step(option);
    if (error) return error;
  }
  if (spec.inboundPort === 0) return configError('--inbound-port', '', `--mesh ${mesh} has no inbound port: give --inbound-port`);
  if (spec.outboundPort === 0) return configError('--outbound-port', '', `--mesh ${mesh} has no outbound port: give --outbound-port`);
  if (spec.dnsCapture && spec.dnsPort === 0) {
    return configError('--dns-port', '0', '--dns-capture needs the port captured DNS goes to: give --dns-port');
  }
  if (spec.inboundPort === spec.outboundPort) {
    return configError('--outbound-port', String(spec.outboundPort), 'must differ from --inbound-port');
  }
  return spec;
}

function assign<T>(parsed: T | ConfigError, set: (value: T) => void): ConfigError | undefined {
  if (isConfigError(parsed)) return parsed;
  set(parsed);
  return undefined;
}

function listItems(text: string): string[] {
  return text.split(',').map((item) => item.trim()).filter((item) => item !== '');
}

export function parsePort(option: RawOption): number | ConfigError {
  const text = option.value.trim();
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) return configError(option.source, option.value, 'expected a port from 1 to 65535');
  return port;
}

function parsePortOrZero(option: RawOption): number | ConfigError {
  return option.value.trim() === '0' ? 0 : parsePort(option);
}

function parseLoopbackCidr(option: RawOption): Cidr | ConfigError {
  const cidr = parseCidr(option.value);
  if (!cidr || cidr.family !== 'ipv4') return configError(option.source, option.value, 'expected an IPv4 CIDR such as 127.0.0.1/32');
  return cidr;
}

function parsePorts(option: RawOption): PortSet | ConfigError {
  const parsed = parsePortSet(option.value);
  return parsed.ok ? parsed.value : configError(option.source, option.value, parsed.problem);
}

/** A comma-separated list whose items each parse or name themselves as the fault. */
function parseList<T>(option: RawOption, parseItem: (item: string) => T | undefined, expected: string): T[] | ConfigError {
  const values: T[] = [];
  for (const item of listItems(option.value)) {
    const value = parseItem(item);
    if (value === undefined) return configError(option.source, option.value, `"${item}" is not ${expected}`);
    values.push(value);
  }
  return values;
}

function parseId(item: string): number | undefined {
  return /^\d{1,10}$/.test(item) && Number(item) <= 0xfffffffe ? Number(item) : undefined;
}

function parseIds(option: RawOption): number[] | ConfigError {
  return parseList(option, parseId, 'a numeric uid/gid');
}

function parseIdSet(option: RawOption): IdSet | ConfigError {
  if (option.value.trim() === '*') return { kind: 'all' };
  const ids = parseIds(option);
  return isConfigError(ids) ? ids : { kind: 'list', ids };
}

function parseCidrs(option: RawOption): Cidr[] | ConfigError {
  return parseList(option, parseCidr, 'an address or CIDR');
}

function parseCidrSet(option: RawOption): CidrSet | ConfigError {
  if (option.value.trim() === '*') return { kind: 'all' };
  const cidrs = parseCidrs(option);
  return isConfigError(cidrs) ? cidrs : { kind: 'list', cidrs };
}

function parseInterfaces(option: RawOption): string[] | ConfigError {
  const names = listItems(option.value);
  // IFNAMSIZ is 16 including the NUL; '/' and whitespace are never valid in an interface name.
  const bad = names.find((name) => name.length > 15 || /[\s/]/.test(name));
  return bad === undefined ? names : configError(option.source, option.value, `"${bad}" is not an interface name`);
}

function parseDnsCapture(option: RawOption): InterceptionSpec['dnsCapture'] | ConfigError {
  const text = option.value.trim().toLowerCase();
  if (text === 'false' || text === 'off' || text === 'no') return undefined;
  if (text === '' || text === 'true' || text === 'on' || text === 'yes') return { servers: [] };
  const servers = parseList(option, parseIp, 'an IP address');
  return isConfigError(servers) ? servers : { servers };
}
