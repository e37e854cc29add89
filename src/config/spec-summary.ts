import { formatCidr } from '../addr/cidr.js';
import { formatPortSet } from '../addr/port-set.js';
import type { InterceptionSpec } from './interception.js';

/** Every field of the configuration line, named as its flag; an empty list is `-`, in both commands. */
const FIELDS = {
  mesh: (spec: InterceptionSpec) => spec.mesh,
  'inbound-port': (spec: InterceptionSpec) => String(spec.inboundPort),
  'outbound-port': (spec: InterceptionSpec) => String(spec.outboundPort),
  tproxy: (spec: InterceptionSpec) => (spec.tproxy ? 'yes' : 'no'),
  'proxy-uid': (spec: InterceptionSpec) => spec.proxyUids.join(','),
  'proxy-gid': (spec: InterceptionSpec) => spec.proxyGids.join(','),
  'include-inbound-ports': (spec: InterceptionSpec) => formatPortSet(spec.includeInboundPorts),
  'exclude-inbound-ports': (spec: InterceptionSpec) => formatPortSet(spec.excludeInboundPorts),
  'include-outbound-cidrs': (spec: InterceptionSpec) =>
    spec.includeOutboundCidrs.kind === 'all' ? '*' : spec.includeOutboundCidrs.cidrs.map(formatCidr).join(','),
  'exclude-outbound-cidrs': (spec: InterceptionSpec) => spec.excludeOutboundCidrs.map(formatCidr).join(','),
  'exclude-outbound-ports': (spec: InterceptionSpec) => formatPortSet(spec.excludeOutboundPorts),
} as const;

export type SpecField = keyof typeof FIELDS;

/** The fields `validate` prints beside its own (family, timeout, rules); `explain` prints them all. */
export const VALIDATE_SPEC_FIELDS: readonly SpecField[] = [
  'mesh',
  'inbound-port',
  'outbound-port',
  'proxy-uid',
  'proxy-gid',
];

/** The configuration in one line, `key=value` with the flags' names, for reports and termination messages. */
export function specSummary(
  spec: InterceptionSpec,
  fields: readonly SpecField[] = Object.keys(FIELDS) as SpecField[],
): string {
  return fields.map((field) => `${field}=${FIELDS[field](spec) || '-'}`).join(' ');
}
