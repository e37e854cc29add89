import { fail, ok } from '../reason/result.js';
import { configInvalid, type ConfigResult } from './config-error.js';
import type { FlagDef } from './flag-def.js';
import { PRESETS, type InterceptionSpec } from './interception.js';
import * as F from './interception-flags.js';
import { flagSource, flagValue, type ParsedFlags } from './parsed-flags.js';

type MutableSpec = { -readonly [K in keyof InterceptionSpec]: InterceptionSpec[K] };
interface FieldFlag {
  readonly flag: FlagDef;
  readonly key: keyof InterceptionSpec;
  apply(parsed: ParsedFlags, spec: MutableSpec): void;
}

/** A flag that, when given, replaces one field of the preset. */
function field<K extends keyof InterceptionSpec>(flag: FlagDef<InterceptionSpec[K]>, key: K): FieldFlag {
  return {
    flag,
    key,
    apply(parsed, spec) {
      const value = flagValue(parsed, flag);
      if (value !== undefined) spec[key] = value;
    },
  };
}

const FIELDS: readonly FieldFlag[] = [
  field(F.INBOUND_PORT_FLAG, 'inboundPort'),
  field(F.OUTBOUND_PORT_FLAG, 'outboundPort'),
  field(F.PROXY_UID_FLAG, 'proxyUids'),
  field(F.PROXY_GID_FLAG, 'proxyGids'),
  field(F.INCLUDE_INBOUND_PORTS_FLAG, 'includeInboundPorts'),
  field(F.EXCLUDE_INBOUND_PORTS_FLAG, 'excludeInboundPorts'),
  field(F.EXCLUDE_INBOUND_CIDRS_FLAG, 'excludeInboundCidrs'),
  field(F.INCLUDE_OUTBOUND_CIDRS_FLAG, 'includeOutboundCidrs'),
  field(F.EXCLUDE_OUTBOUND_CIDRS_FLAG, 'excludeOutboundCidrs'),
  field(F.INCLUDE_OUTBOUND_PORTS_FLAG, 'includeOutboundPorts'),
  field(F.EXCLUDE_OUTBOUND_PORTS_FLAG, 'excludeOutboundPorts'),
  field(F.INCLUDE_OUTBOUND_GIDS_FLAG, 'includeOutboundGids'),
  field(F.EXCLUDE_OUTBOUND_GIDS_FLAG, 'excludeOutboundGids'),
  field(F.EXCLUDE_INTERFACES_FLAG, 'excludeInterfaces'),
  field(F.TPROXY_FLAG, 'tproxy'),
  field(F.DNS_PORT_FLAG, 'dnsPort'),
  field(F.INBOUND_TUNNEL_PORT_FLAG, 'inboundTunnelPort'),
  field(F.HOST_LOOPBACK_CIDR_FLAG, 'hostLoopbackCidr'),
  field(F.REROUTE_INTERFACES_FLAG, 'rerouteInterfaces'),
  field(F.PROXY_LOOPBACK_INBOUND_FLAG, 'proxyLoopbackToInbound'),
  field(F.DROP_INVALID_FLAG, 'dropInvalid'),
  field(F.HOST_PROBE_ADDRESSES_FLAG, 'hostProbeAddresses'),
];

/** Builds the spec from the preset named by --mesh, replacing each field a flag gives. */
export function buildInterceptionSpec(parsed: ParsedFlags): ConfigResult<InterceptionSpec> {
  const mesh = flagValue(parsed, F.MESH_FLAG);
  const spec: MutableSpec = { ...PRESETS[mesh].spec };
  for (const item of FIELDS) item.apply(parsed, spec);
  const dns = dnsCaptureOf(parsed);
  if (!dns.ok) return dns;
  if (dns.value !== 'preset') spec.dnsCapture = dns.value;
  return checkSpec(spec);
}

/** The spec fields a flag (or its environment variable) set: the pod's annotations never override them. */
export function explicitFields(parsed: ParsedFlags): Set<keyof InterceptionSpec> {
  return new Set(FIELDS.filter(({ flag }) => flagSource(parsed, flag) !== undefined).map(({ key }) => key));
}

/** `--dns-capture` turns capture on; `--dns-servers` narrows it and means nothing without it. */
function dnsCaptureOf(parsed: ParsedFlags): ConfigResult<InterceptionSpec['dnsCapture'] | 'preset'> {
  const capture = flagValue(parsed, F.DNS_CAPTURE_FLAG);
  const servers = flagValue(parsed, F.DNS_SERVERS_FLAG);
  if (servers !== undefined && capture !== true) {
    return fail(
      'ConfigInvalid',
      `${flagSource(parsed, F.DNS_SERVERS_FLAG) ?? '--dns-servers'}: needs --dns-capture (or INTERLOCK_DNS_CAPTURE=true)`,
    );
  }
  if (capture === undefined) return ok('preset');
  return ok(capture ? { servers: servers ?? [] } : undefined);
}

function checkSpec(spec: InterceptionSpec): ConfigResult<InterceptionSpec> {
  if (spec.inboundPort === 0)
    return configInvalid('--inbound-port', undefined, `--mesh ${spec.mesh} has no inbound port: give --inbound-port`);
  if (spec.outboundPort === 0)
    return configInvalid(
      '--outbound-port',
      undefined,
      `--mesh ${spec.mesh} has no outbound port: give --outbound-port`,
    );
  if (spec.dnsCapture && spec.dnsPort === 0)
    return configInvalid('--dns-port', '0', '--dns-capture needs the port captured DNS goes to: give --dns-port');
  if (spec.inboundPort === spec.outboundPort)
    return configInvalid('--outbound-port', String(spec.outboundPort), 'must differ from --inbound-port');
  return ok(spec);
}

/** The spec field a flag sets and the flag's own parser: how a pod annotation naming the flag is read. */
export interface FlagTarget<K extends keyof InterceptionSpec = keyof InterceptionSpec> {
  readonly key: K;
  readonly parse: (text: string) => { ok: true; value: InterceptionSpec[K] } | { ok: false };
}

/** The field and parser of `--name` (its FIELDS entry; `--dns-capture` turns capture on to every server). */
export function flagTarget(flag: string): FlagTarget | undefined {
  if (flag === `--${F.DNS_CAPTURE_FLAG.name}`)
    return {
      key: 'dnsCapture',
      parse: (text) => {
        const parsed = F.DNS_CAPTURE_FLAG.parse(text);
        return parsed.ok ? { ok: true, value: parsed.value ? { servers: [] } : undefined } : { ok: false };
      },
    };
  const item = FIELDS.find((entry) => `--${entry.flag.name}` === flag);
  if (!item) return undefined;
  return { key: item.key, parse: (text) => item.flag.parse(text) as ReturnType<FlagTarget['parse']> };
}
