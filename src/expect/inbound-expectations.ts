import type { Family } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { InterfaceAtoms } from '../trace/interface-atoms.js';
import { subtractSets } from '../trace/interval-set.js';
import { bitsOf, CT_STATES, type Region } from '../trace/region.js';
import type { Expected } from './expected.js';
import { ExpectationList, type Expectation } from './expectation.js';
import { inboundProbeClaims } from './mark-claims.js';
import { cidrSet, includedSet, interfaces, loopbackRange, notPorts, portList, ports } from './spec-sets.js';

/** What the configuration requires of every TCP connection arriving at the pod. */
export function inboundExpectations(
  spec: InterceptionSpec,
  family: Family,
  atoms: InterfaceAtoms,
  space: Region,
): Expectation[] {
  const list = new ExpectationList(family, 'prerouting', space);
  if (spec.dropInvalid)
    list.claim(
      'inbound/invalid-dropped',
      'packets in conntrack state INVALID are dropped',
      { ctstates: bitsOf(CT_STATES, ['invalid']) },
      { kind: 'dropped' },
    );
  if (spec.excludeInterfaces.length > 0) {
    list.claim(
      'inbound/excluded-interface',
      `interfaces ${spec.excludeInterfaces.join(', ')} are excluded`,
      { iface: interfaces(atoms, spec.excludeInterfaces) },
      { kind: 'not-redirected' },
    );
  }
  loopbackClaims(list, family, atoms);
  if (spec.rerouteInterfaces.length > 0) reroutedClaims(list, spec, family, atoms);
  inboundProbeClaims({ spec, family, atoms, list });
  list.claim(
    'inbound/excluded-source',
    'inbound from excluded source ranges is not captured',
    { saddr: cidrSet(spec.excludeInboundCidrs, family) },
    { kind: 'not-redirected' },
  );
  tunnelClaims(list, spec);
  list.claim(
    'inbound/excluded-port',
    'excluded inbound ports are not captured',
    { dport: ports(spec.excludeInboundPorts) },
    { kind: 'not-redirected' },
  );
  list.claim(
    'inbound/not-included-port',
    'only the included inbound ports are captured',
    { dport: notPorts(ports(spec.includeInboundPorts)) },
    { kind: 'not-redirected' },
  );
  const captured: Expected = spec.tproxy
    ? { kind: 'tproxy', port: spec.inboundPort }
    : { kind: 'redirect', port: spec.inboundPort };
  return list.done('inbound/app', 'inbound TCP to an application port is captured', captured);
}

/** The inbound tunnel (Istio HBONE 15008) is never sent to the inbound port. */
function tunnelClaims(list: ExpectationList, spec: InterceptionSpec): void {
  // In TPROXY mode Istio's sidecar diverts the tunnel port too (its mangle rules carry no exception
  // for it); ambient's TPROXY (istio-cni 1.21 to 1.23, and 1.24's option) diverts it to the tunnel port itself.
  if (spec.tproxy && spec.dataplane === 'ambient' && spec.inboundTunnelPort !== 0) {
    list.claim(
      'inbound/tunnel-port',
      `the inbound tunnel port ${spec.inboundTunnelPort} goes to the proxy's tunnel listener`,
      { dport: portList([spec.inboundTunnelPort]) },
      { kind: 'tproxy', port: spec.inboundTunnelPort },
    );
  }
  if (!spec.tproxy && spec.inboundTunnelPort !== 0) {
    list.claim(
      'inbound/tunnel-port',
      `the inbound tunnel port ${spec.inboundTunnelPort} is not captured`,
      { dport: portList([spec.inboundTunnelPort]) },
      { kind: 'not-redirected' },
    );
  }
}

/** Istio's virtual interfaces (KubeVirt): their TCP to an included range is treated as outbound. */
function reroutedClaims(list: ExpectationList, spec: InterceptionSpec, family: Family, atoms: InterfaceAtoms): void {
  const rerouted = interfaces(atoms, spec.rerouteInterfaces);
  const included = subtractSets(includedSet(spec.includeOutboundCidrs, family), loopbackRange(family));
  list.claim(
    'inbound/rerouted-interface',
    `TCP arriving on virtual interfaces ${spec.rerouteInterfaces.join(', ')} for an included range goes to the outbound port`,
    { iface: rerouted, daddr: included },
    { kind: 'redirect', port: spec.outboundPort },
  );
  list.claim(
    'inbound/rerouted-interface-other',
    'TCP arriving on a virtual interface outside the included ranges is left alone',
    { iface: rerouted },
    { kind: 'not-redirected' },
  );
}

/** Loopback arrivals were decided in OUTPUT, and loopback destinations never arrive from outside. */
function loopbackClaims(list: ExpectationList, family: Family, atoms: InterfaceAtoms): void {
  list.claim(
    'inbound/loopback',
    "connections arriving over lo were decided in OUTPUT (the kernel's NAT binds once)",
    { iface: interfaces(atoms, ['lo']) },
    undefined,
  );
  list.claim(
    'inbound/loopback-destination',
    'loopback destinations never arrive from the network',
    { daddr: loopbackRange(family) },
    undefined,
  );
}
