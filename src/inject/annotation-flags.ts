import type { Mesh } from '../config/interception.js';

import { scalarText, type Plain } from './plain.js';

/**
 * Pod annotations the mesh's CNI plugin (or its template, into istio-iptables / proxy-init
 * arguments) turns into exclusions, and the validate flag each becomes. Only used where the
 * mesh's own rendered argv does not already carry them: Linkerd's validator argv never does.
 */
const ANNOTATION_FLAGS: Readonly<Record<Mesh, Readonly<Record<string, string>>>> = {
  linkerd: {
    'config.linkerd.io/skip-outbound-ports': '--exclude-outbound-ports',
    'config.linkerd.io/skip-inbound-ports': '--exclude-inbound-ports',
    'config.linkerd.io/skip-subnets': '--exclude-outbound-cidrs',
  },
  istio: {
    'traffic.sidecar.istio.io/includeInboundPorts': '--include-inbound-ports',
    'traffic.sidecar.istio.io/excludeInboundPorts': '--exclude-inbound-ports',
    'traffic.sidecar.istio.io/includeOutboundIPRanges': '--include-outbound-cidrs',
    'traffic.sidecar.istio.io/excludeOutboundIPRanges': '--exclude-outbound-cidrs',
    'traffic.sidecar.istio.io/includeOutboundPorts': '--include-outbound-ports',
    'traffic.sidecar.istio.io/excludeOutboundPorts': '--exclude-outbound-ports',
    'traffic.sidecar.istio.io/excludeInterfaces': '--exclude-interfaces',
    'traffic.sidecar.istio.io/kubevirtInterfaces': '--reroute-interfaces',
  },
  // Ambient's annotations (ambient.istio.io/dns-capture, bypass-inbound-capture) are not read yet.
  'istio-ambient': {},
  generic: {},
};

/** validate flags for the pod's mesh annotations, in the table's order; flags already in `args` win. */
export function annotationFlags(mesh: Mesh, metadata: Plain | undefined, args: readonly string[]): string[] {
  const annotations = metadata?.annotations;
  if (typeof annotations !== 'object' || annotations === null) return [];
  const given = new Set(args.map((arg) => arg.split('=')[0]));
  const out: string[] = [];
  for (const [annotation, flag] of Object.entries(ANNOTATION_FLAGS[mesh])) {
    const value = (annotations as Plain)[annotation];
    if (value === undefined || value === null || given.has(flag)) continue;
    out.push(`${flag}=${scalarText(value).replace(/\s+/g, '')}`);
  }
  const mode = (annotations as Plain)['sidecar.istio.io/interceptionMode'];
  if (mesh === 'istio' && scalarText(mode) === 'TPROXY' && !given.has('--tproxy')) out.push('--tproxy');
  return out;
}
