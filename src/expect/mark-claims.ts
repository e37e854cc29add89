import type { Family } from '../addr/ip.js';
import type { InterceptionSpec, MarkMatch } from '../config/interception.js';
import type { InterfaceAtoms } from '../trace/interface-atoms.js';
import { markCube, type MarkSet } from '../trace/mark-set.js';
import type { ExpectationList } from './expectation.js';
import { addressSet, notInterfaces, portList } from './spec-sets.js';

/**
 * The claims of a mesh whose proxy is told apart by socket marks and that trusts a node probe
 * address (Istio ambient): ztunnel's own packets, the probes, and DNS as istio-cni captures it.
 */
interface MarkScope {
  readonly spec: InterceptionSpec;
  readonly family: Family;
  readonly atoms: InterfaceAtoms;
  readonly list: ExpectationList;
}

const TCP = 1;
const UDP = 2;

function marks(list: readonly MarkMatch[]): MarkSet {
  return list.flatMap((mark) => markCube(mark.value, mark.mask));
}

function formatMarks(list: readonly MarkMatch[]): string {
  return list.map((mark) => `0x${mark.value.toString(16)}/0x${mark.mask.toString(16)}`).join(', ');
}

/** TCP to the node's probe address, and the proxy's own marked packets: never redirected. */
export function proxyMarkClaims({ spec, family, list }: MarkScope): void {
  const probes = addressSet(spec.hostProbeAddresses, family);
  if (probes.length > 0)
    list.claim(
      'outbound/host-probe',
      `TCP to the node's probe address (${spec.hostProbeAddresses.length} configured) is accepted`,
      { protocols: TCP, daddr: probes },
      { kind: 'not-redirected' },
    );
  if (spec.proxyMarks.length === 0) return;
  const proxy = marks(spec.proxyMarks);
  list.claim(
    'outbound/proxy-mark',
    `the proxy's own TCP (mark ${formatMarks(spec.proxyMarks)}) must not loop back into it`,
    { protocols: TCP, mark: proxy },
    { kind: 'not-redirected' },
  );
  // istio-cni 1.21 and 1.22 redirect even ztunnel's own UDP DNS; later releases spare it.
  list.claim(
    'outbound/proxy-mark-udp',
    "the proxy's own UDP is left to the mesh (istio-cni 1.21-1.22 redirect its DNS too)",
    { protocols: UDP, mark: proxy },
    undefined,
  );
}

/**
 * DNS leaving the pod reaches the proxy: UDP to its DNS port, TCP to its DNS port (from 1.23) or
 * its outbound port (1.21-1.22 have no TCP DNS rule). Over lo istio-cni leaves DNS alone.
 */
export function markedDnsClaims({ spec, family, atoms, list }: MarkScope): void {
  if (!spec.dnsCapture || spec.dnsPort === 0) return;
  const servers = spec.dnsCapture.servers;
  if (servers.length > 0 && !servers.some((server) => server.family === family)) return;
  const to = servers.length === 0 ? {} : { daddr: addressSet(servers, family) };
  const away = notInterfaces(atoms, ['lo']);
  const dns = portList([53]);
  if (spec.acceptedMarks.length > 0)
    list.claim(
      'dns/accepted-mark',
      'TCP DNS carrying the accepted-connection mark is redirected from 1.23 and accepted before: left to the mesh',
      { protocols: TCP, dport: dns, mark: marks(spec.acceptedMarks) },
      undefined,
    );
  list.claim(
    'dns/app-udp',
    'UDP DNS from the application is captured',
    { ...to, protocols: UDP, iface: away, dport: dns },
    { kind: 'redirect', port: spec.dnsPort },
  );
  list.claim(
    'dns/app-tcp',
    'TCP DNS from the application reaches the proxy',
    { ...to, protocols: TCP, iface: away, dport: dns },
    { kind: 'redirect-any', ports: [spec.dnsPort, spec.outboundPort] },
  );
}

/** Outbound TCP of a connection the proxy accepted (its mark restored from the connection): not redirected. */
export function acceptedMarkClaims({ spec, list }: MarkScope): void {
  if (spec.acceptedMarks.length === 0) return;
  list.claim(
    'outbound/accepted-mark',
    `TCP carrying the accepted-connection mark (${formatMarks(spec.acceptedMarks)}) is not captured again`,
    { protocols: TCP, mark: marks(spec.acceptedMarks) },
    { kind: 'not-redirected' },
  );
}

/** TCP from the node's probe address arrives unredirected (the kubelet's health checks). */
export function inboundProbeClaims({ spec, family, list }: MarkScope): void {
  const probes = addressSet(spec.hostProbeAddresses, family);
  if (probes.length === 0) return;
  list.claim(
    'inbound/host-probe',
    "TCP from the node's probe address is accepted (the kubelet's health checks)",
    { saddr: probes },
    { kind: 'not-redirected' },
  );
}
