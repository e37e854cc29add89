import {
  ambientAnnotationsRead,
  ISTIO_AMBIENT_POD_ANNOTATIONS,
  type AmbientPodAnnotation,
} from '../mesh/istio-ambient.js';
import { meshIdentity } from '../mesh/meshes.js';
import { ALL_PORTS, NO_PORTS, type PortSet } from '../addr/port-set.js';
import { parseCidrs, parseCidrSet, parseIds, parseInterfaces, parsePorts, type FlagParser } from './flag-parsers.js';
import type { InterceptionSpec } from './interception.js';

/** The pod's own metadata, read from downward-API files at run time; undefined when no file was given. */
export interface PodMetadata {
  readonly annotations: ReadonlyMap<string, string> | undefined;
  readonly labels: ReadonlyMap<string, string> | undefined;
}

type MutableSpec = { -readonly [K in keyof InterceptionSpec]: InterceptionSpec[K] };

/** What the pod's metadata makes of the spec, and whether the outbound exclusions are now known. */
export interface PodMetadataOutcome {
  readonly spec: InterceptionSpec;
  /** The ports the mesh may leave uncaptured are all known: the probe may spread beyond its first port. */
  readonly exclusionsKnown: boolean;
  /** Why, for the log. */
  readonly why: string;
}

const LINKERD_CONTROL_PLANE_LABEL = 'linkerd.io/control-plane-component';
/** linkerd-cni's fallback for control-plane pods when the API server's ports cannot be read. */
const LINKERD_API_SERVER_PORTS = [443, 6443];

/**
 * Applies the pod's annotations and labels as the mesh's CNI plugin applies them when it writes
 * the pod's rules (linkerd-cni `cni-plugin/main.go`, istio-cni `cni/pkg/plugin/sidecar_redirect.go`;
 * test/fixtures/meshes/facts). A field the operator set by flag is kept. A value the plugin would
 * not accept leaves the field alone and the exclusions unknown: the probe then stays on the ports
 * the mesh guarantees, never failing a pod on a guess.
 */
export function applyPodMetadata(
  input: InterceptionSpec,
  metadata: PodMetadata,
  explicit: ReadonlySet<keyof InterceptionSpec>,
  ambientReads: ReadonlySet<AmbientPodAnnotation> = ambientAnnotationsRead(),
): PodMetadataOutcome {
  const rules = meshIdentity(input.mesh).podMetadata;
  const spec =
    rules === 'istio-cni-ambient' && metadata.annotations
      ? ambientOverrides(input, metadata.annotations, explicit, ambientReads)
      : input;
  if (explicit.has('excludeOutboundPorts'))
    return { spec, exclusionsKnown: true, why: 'outbound exclusions given by --exclude-outbound-ports' };
  if (!metadata.annotations)
    return { spec, exclusionsKnown: false, why: 'outbound exclusions unknown (no --pod-annotations)' };
  if (rules === 'linkerd-cni') return linkerdMetadata(spec, metadata.annotations, metadata.labels, explicit);
  if (rules === 'istio-cni') return istioMetadata(spec, metadata.annotations, explicit);
  return { spec, exclusionsKnown: false, why: `outbound exclusions unknown (--mesh ${spec.mesh} has no annotations)` };
}

function linkerdMetadata(
  input: InterceptionSpec,
  annotations: ReadonlyMap<string, string>,
  labels: ReadonlyMap<string, string> | undefined,
  explicit: ReadonlySet<keyof InterceptionSpec>,
): PodMetadataOutcome {
  const spec: MutableSpec = { ...input };
  const set = setter(spec, explicit);
  // linkerd-cni: an empty annotation is absent; a pod's annotation wins over the namespace's.
  const read = (key: string) => {
    const text = annotations.get(`config.linkerd.io/${key}`);
    return text === undefined || text === '' ? undefined : text;
  };
  let valid = set('proxyUids', read('proxy-uid'), parseIds);
  valid = set('proxyGids', read('proxy-gid'), parseIds) && valid;
  const inbound = read('skip-inbound-ports');
  const inboundPorts =
    inbound === undefined ? undefined : parsePorts(`${portsText(spec.excludeInboundPorts)},${inbound}`);
  if (inboundPorts?.ok === false) valid = false;
  else if (inboundPorts && !explicit.has('excludeInboundPorts')) spec.excludeInboundPorts = inboundPorts.value;
  valid = set('excludeInboundCidrs', read('skip-subnets'), parseCidrs) && valid;
  const outbound = read('skip-outbound-ports');
  const outboundPorts = outbound === undefined ? undefined : parsePorts(outbound);
  if (outboundPorts?.ok) spec.excludeOutboundPorts = outboundPorts.value;
  const controlPlane = labels?.get(LINKERD_CONTROL_PLANE_LABEL);
  if (controlPlane !== undefined && controlPlane !== '')
    spec.excludeOutboundPorts = withPorts(spec.excludeOutboundPorts, LINKERD_API_SERVER_PORTS);
  const why =
    outboundPorts === undefined
      ? 'outbound exclusions unknown: no config.linkerd.io/skip-outbound-ports on the pod (the namespace or linkerd-cni may set them)'
      : !outboundPorts.ok || !valid
        ? 'outbound exclusions unknown: an annotation linkerd-cni reads does not parse'
        : labels === undefined
          ? 'outbound exclusions unknown: no --pod-labels to tell whether the pod is a control-plane pod'
          : controlPlane
            ? "outbound exclusions unknown: a control-plane pod also skips the API server's ports"
            : 'outbound exclusions from config.linkerd.io/skip-outbound-ports';
  const known = why.startsWith('outbound exclusions from');
  return { spec, exclusionsKnown: known, why };
}

function istioMetadata(
  input: InterceptionSpec,
  annotations: ReadonlyMap<string, string>,
  explicit: ReadonlySet<keyof InterceptionSpec>,
): PodMetadataOutcome {
  const spec: MutableSpec = { ...input };
  const set = setter(spec, explicit);
  // istio-cni: an annotation, present even if empty, replaces the plugin's default.
  const read = (key: string) => annotations.get(`traffic.sidecar.istio.io/${key}`);
  let valid = set('includeOutboundCidrs', read('includeOutboundIPRanges') ?? '*', parseCidrSet);
  valid = set('excludeOutboundCidrs', read('excludeOutboundIPRanges') ?? '', parseCidrs) && valid;
  valid = set('includeInboundPorts', read('includeInboundPorts') ?? '*', parsePorts) && valid;
  // The plugin always appends the status and metrics ports to the inbound exclusions.
  valid =
    set('excludeInboundPorts', `${read('excludeInboundPorts') ?? '15020'},15020,15021,15090`, parsePorts) && valid;
  valid = set('excludeOutboundPorts', read('excludeOutboundPorts') ?? '15020', parsePorts) && valid;
  valid = set('includeOutboundPorts', read('includeOutboundPorts') ?? '', parsePorts) && valid;
  valid = set('excludeInterfaces', read('excludeInterfaces') ?? '', parseInterfaces) && valid;
  const reroute = annotations.get('istio.io/reroute-virtual-interfaces') ?? read('kubevirtInterfaces') ?? '';
  valid = set('rerouteInterfaces', reroute, parseInterfaces) && valid;
  const mode = annotations.get('sidecar.istio.io/interceptionMode');
  if (mode === 'TPROXY' && !explicit.has('tproxy')) spec.tproxy = true;
  if (mode !== undefined && mode !== 'TPROXY' && mode !== 'REDIRECT') valid = false;
  return valid
    ? { spec, exclusionsKnown: true, why: "outbound exclusions from the pod's traffic.sidecar.istio.io annotations" }
    : {
        spec: input,
        exclusionsKnown: false,
        why: 'outbound exclusions unknown: an annotation istio-cni reads does not parse',
      };
}

/** Go's strconv.ParseBool, as istio-cni reads a boolean annotation; undefined when it does not parse. */
function goBool(text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** The pod's own DNS capture switch (ambient.istio.io/dns-capture), undefined when istio-cni would not read one. */
export function ambientDnsOverride(annotations: ReadonlyMap<string, string>): boolean | undefined {
  return goBool(annotations.get(ISTIO_AMBIENT_POD_ANNOTATIONS.dnsCapture));
}

/**
 * istio-cni's per-pod overrides of an ambient pod's rules (ISTIO_AMBIENT_POD_ANNOTATIONS): the
 * pod's value over the chart's (`--dns-capture` states the chart's), a field given by its own flag
 * kept. A value istio-cni ignores is ignored here too.
 */
function ambientOverrides(
  input: InterceptionSpec,
  annotations: ReadonlyMap<string, string>,
  explicit: ReadonlySet<keyof InterceptionSpec>,
  reads: ReadonlySet<AmbientPodAnnotation>,
): InterceptionSpec {
  const spec: MutableSpec = { ...input };
  const names = ISTIO_AMBIENT_POD_ANNOTATIONS;
  // The version's istio-cni reads only `reads`: any other annotation is as if absent.
  const read = (key: AmbientPodAnnotation) => (reads.has(key) ? annotations.get(names[key]) : undefined);
  if (goBool(read('bypassInboundCapture')) === true && !explicit.has('includeInboundPorts'))
    spec.includeInboundPorts = NO_PORTS;
  const dns = goBool(read('dnsCapture'));
  if (dns !== undefined) spec.dnsCapture = dns ? (input.dnsCapture ?? { servers: [] }) : undefined;
  const reroute = read('rerouteVirtualInterfaces');
  const interfaces = reroute
    ?.split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (interfaces && interfaces.length > 0)
    setter(spec, explicit)('rerouteInterfaces', interfaces.join(','), parseInterfaces);
  return spec;
}

/** Sets a field from annotation text unless a flag set it; false when the text does not parse. */
function setter(spec: MutableSpec, explicit: ReadonlySet<keyof InterceptionSpec>) {
  return <K extends keyof InterceptionSpec>(
    key: K,
    text: string | undefined,
    parse: FlagParser<InterceptionSpec[K]>,
  ): boolean => {
    if (text === undefined) return true;
    const parsed = parse(text);
    if (!parsed.ok) return false;
    if (!explicit.has(key)) spec[key] = parsed.value;
    return true;
  };
}

function portsText(set: PortSet): string {
  if (set.kind === 'all') return '*';
  return set.ranges.map((range) => (range.from === range.to ? `${range.from}` : `${range.from}-${range.to}`)).join(',');
}

function withPorts(set: PortSet, ports: readonly number[]): PortSet {
  if (set.kind === 'all') return ALL_PORTS;
  const base = set.ranges.length === 0 ? NO_PORTS : set;
  const parsed = parsePorts([portsText(base), ...ports].filter((text) => text !== '').join(','));
  return parsed.ok ? parsed.value : set;
}
