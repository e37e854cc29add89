import { MESHES, presetFiguresText, type Mesh } from '../mesh/meshes.js';
import type { Cidr } from '../addr/cidr.js';
import type { IpAddress } from '../addr/ip.js';
import { formatPortSet, type PortSet } from '../addr/port-set.js';
import { envOf, valueFlag, type FlagDef } from './flag-def.js';
import {
  oneOf,
  parseBoolean,
  parseCidrs,
  parseCidrSet,
  parseIds,
  parseIdSet,
  parseInterfaces,
  parseIps,
  parseLoopbackCidr,
  parsePort,
  parsePortOrZero,
  parsePorts,
  type CidrSet,
  type IdSet,
} from './flag-parsers.js';

function toggle(name: string, help: string): FlagDef<boolean> {
  return { name, kind: 'switch', env: envOf(name), help, parse: parseBoolean };
}

export const MESH_FLAG = valueFlag(
  'mesh',
  MESHES.join('|'),
  'The mesh: its preset for every value below, its validator container and failure code (default {default}, which needs the two ports; required by cni-check and by the init container of manifest; manifest --webhook takes only istio-ambient, which adds the validator to the pods ambient captures).',
  oneOf<Mesh>(MESHES),
  { default: 'generic' },
);
export const INBOUND_PORT_FLAG = valueFlag<number>(
  'inbound-port',
  'PORT',
  `Proxy's inbound redirect port (${presetFiguresText((capture) => String(capture.inboundPort))}).`,
  parsePort,
  {},
);
export const OUTBOUND_PORT_FLAG = valueFlag<number>(
  'outbound-port',
  'PORT',
  `Proxy's outbound redirect port (${presetFiguresText((capture) => String(capture.outboundPort))}).`,
  parsePort,
  {},
);
export const PROXY_UID_FLAG = valueFlag<number[]>(
  'proxy-uid',
  'UID[,UID]',
  `The proxy's uid(s): their traffic must not be redirected (${presetFiguresText((capture) => capture.proxyUids?.join(','))}).`,
  parseIds,
);
export const PROXY_GID_FLAG = valueFlag<number[]>(
  'proxy-gid',
  'GID[,GID]',
  "The proxy's gid(s), likewise (istio 1337; linkerd none).",
  parseIds,
);
export const INCLUDE_INBOUND_PORTS_FLAG = valueFlag<PortSet>(
  'include-inbound-ports',
  'PORTS',
  'Inbound ports that must be redirected; `*` (default) or a list.',
  parsePorts,
);
export const EXCLUDE_INBOUND_PORTS_FLAG = valueFlag<PortSet>(
  'exclude-inbound-ports',
  'PORTS',
  `Inbound ports that must not be (${presetFiguresText((capture) => capture.excludeInboundPorts && formatPortSet(capture.excludeInboundPorts), '; ')}).`,
  parsePorts,
);
export const EXCLUDE_INBOUND_CIDRS_FLAG = valueFlag<Cidr[]>(
  'exclude-inbound-cidrs',
  'CIDRS',
  "Source networks whose inbound traffic is not redirected (Linkerd's `--subnets-to-ignore`).",
  parseCidrs,
);
export const INCLUDE_OUTBOUND_CIDRS_FLAG = valueFlag<CidrSet>(
  'include-outbound-cidrs',
  'CIDRS',
  'Destinations whose outbound TCP must be redirected; `*` (default) or a list.',
  parseCidrSet,
);
export const EXCLUDE_OUTBOUND_CIDRS_FLAG = valueFlag<Cidr[]>(
  'exclude-outbound-cidrs',
  'CIDRS',
  'Destinations that must not be redirected.',
  parseCidrs,
);
export const INCLUDE_OUTBOUND_PORTS_FLAG = valueFlag<PortSet>(
  'include-outbound-ports',
  'PORTS',
  'Destination ports redirected whatever the address (Istio includeOutboundPorts).',
  parsePorts,
);
export const EXCLUDE_OUTBOUND_PORTS_FLAG = valueFlag<PortSet>(
  'exclude-outbound-ports',
  'PORTS',
  `Destination ports not redirected (${presetFiguresText((capture) => capture.excludeOutboundPorts && formatPortSet(capture.excludeOutboundPorts), '; ')}).`,
  parsePorts,
);
export const INCLUDE_OUTBOUND_GIDS_FLAG = valueFlag<IdSet>(
  'include-outbound-gids',
  'GIDS',
  'Only these groups are captured outbound; `*` (default).',
  parseIdSet,
);
export const EXCLUDE_OUTBOUND_GIDS_FLAG = valueFlag<number[]>(
  'exclude-outbound-gids',
  'GIDS',
  'Groups whose outbound traffic is not captured.',
  parseIds,
);
export const EXCLUDE_INTERFACES_FLAG = valueFlag<string[]>(
  'exclude-interfaces',
  'IFACES',
  'Interfaces the mesh leaves alone.',
  parseInterfaces,
);
export const TPROXY_FLAG = toggle('tproxy', 'Inbound capture is TPROXY (mangle) instead of REDIRECT.');
export const DNS_CAPTURE_FLAG = toggle('dns-capture', 'DNS is captured (to every server, or only to `--dns-servers`).');
export const DNS_SERVERS_FLAG = valueFlag<IpAddress[]>(
  'dns-servers',
  'ADDRS',
  'With `--dns-capture`: only DNS to these server addresses is captured.',
  parseIps,
);
export const DNS_PORT_FLAG = valueFlag<number>(
  'dns-port',
  'PORT',
  `Port captured DNS goes to (${presetFiguresText((capture) => capture.dnsPort?.toString())}).`,
  parsePortOrZero,
);
export const INBOUND_TUNNEL_PORT_FLAG = valueFlag<number>(
  'inbound-tunnel-port',
  'PORT',
  `Inbound tunnel port never redirected (${presetFiguresText((capture) => capture.inboundTunnelPort?.toString())}); 0 for none.`,
  parsePortOrZero,
);
export const HOST_LOOPBACK_CIDR_FLAG = valueFlag<Cidr>(
  'host-loopback-cidr',
  'CIDR',
  'IPv4 host-loopback destinations never redirected (default 127.0.0.1/32).',
  parseLoopbackCidr,
);
export const REROUTE_INTERFACES_FLAG = valueFlag<string[]>(
  'reroute-interfaces',
  'IFACES',
  'Interfaces whose arriving TCP goes to the outbound port (Istio kubevirtInterfaces).',
  parseInterfaces,
);
export const PROXY_LOOPBACK_INBOUND_FLAG = toggle(
  'proxy-loopback-inbound',
  "The proxy uid's loopback TCP to the pod's address goes to the inbound port (istio default; `INTERLOCK_PROXY_LOOPBACK_INBOUND=false` turns it off).",
);
export const DROP_INVALID_FLAG = toggle(
  'drop-invalid',
  'Packets in conntrack state INVALID are dropped (Istio INVALID_DROP).',
);

export const HOST_PROBE_ADDRESSES_FLAG = valueFlag<IpAddress[]>(
  'host-probe-addresses',
  'ADDRS',
  "The node's health-probe source addresses, whose TCP is accepted unredirected (istio-ambient: 169.254.7.127 and fd16:9254:7127:1337:ffff:ffff:ffff:ffff, istio-cni's HOST_PROBE_SNAT_IP and HOST_PROBE_SNAT_IPV6).",
  parseIps,
);

export const INTERCEPTION_FLAGS: readonly FlagDef[] = [
  MESH_FLAG,
  INBOUND_PORT_FLAG,
  OUTBOUND_PORT_FLAG,
  PROXY_UID_FLAG,
  PROXY_GID_FLAG,
  INCLUDE_INBOUND_PORTS_FLAG,
  EXCLUDE_INBOUND_PORTS_FLAG,
  EXCLUDE_INBOUND_CIDRS_FLAG,
  INCLUDE_OUTBOUND_CIDRS_FLAG,
  EXCLUDE_OUTBOUND_CIDRS_FLAG,
  INCLUDE_OUTBOUND_PORTS_FLAG,
  EXCLUDE_OUTBOUND_PORTS_FLAG,
  INCLUDE_OUTBOUND_GIDS_FLAG,
  EXCLUDE_OUTBOUND_GIDS_FLAG,
  EXCLUDE_INTERFACES_FLAG,
  TPROXY_FLAG,
  DNS_CAPTURE_FLAG,
  DNS_SERVERS_FLAG,
  DNS_PORT_FLAG,
  INBOUND_TUNNEL_PORT_FLAG,
  HOST_LOOPBACK_CIDR_FLAG,
  REROUTE_INTERFACES_FLAG,
  PROXY_LOOPBACK_INBOUND_FLAG,
  DROP_INVALID_FLAG,
  HOST_PROBE_ADDRESSES_FLAG,
] as readonly FlagDef[];
