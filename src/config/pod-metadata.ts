import {
  ambientAnnotationsRead,
  ISTIO_AMBIENT_POD_ANNOTATIONS,
  type AmbientPodAnnotation,
} from '../mesh/istio-ambient.js';
import { meshIdentity } from '../mesh/meshes.js';
import type { AnnotationSwitch, MeshIdentity, PodAnnotation } from '../mesh/mesh-identity.js';
import { formatPortSet, NO_PORTS, type PortSet } from '../addr/port-set.js';
import { flagTarget } from './build-interception.js';
import { parseInterfaces, parsePorts, type FlagParser } from './flag-parsers.js';
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

/**
 * Applies the pod's annotations and labels as the mesh's CNI plugin applies them when it writes
 * the pod's rules, from the mesh module's data alone (podAnnotations, annotationSwitches,
 * opaqueAnnotations, labelExclusions in src/mesh/), each value read by its flag's own parser. A
 * field the operator set by flag is kept. A value the plugin would not accept leaves the spec
 * alone and the exclusions unknown: the probe then stays on the ports the mesh guarantees.
 */
export function applyPodMetadata(
  input: InterceptionSpec,
  metadata: PodMetadata,
  explicit: ReadonlySet<keyof InterceptionSpec>,
  ambientReads: ReadonlySet<AmbientPodAnnotation> = ambientAnnotationsRead(),
): PodMetadataOutcome {
  const identity = meshIdentity(input.mesh);
  const spec =
    identity.podMetadata === 'istio-cni-ambient' && metadata.annotations
      ? ambientOverrides(input, metadata.annotations, explicit, ambientReads)
      : input;
  if (explicit.has('excludeOutboundPorts'))
    return { spec, exclusionsKnown: true, why: 'outbound exclusions given by --exclude-outbound-ports' };
  if (!metadata.annotations)
    return { spec, exclusionsKnown: false, why: 'outbound exclusions unknown (no --pod-annotations)' };
  if (identity.podMetadata !== 'annotations')
    return {
      spec,
      exclusionsKnown: false,
      why: `outbound exclusions unknown (--mesh ${spec.mesh} has no annotations)`,
    };
  return readAnnotations(spec, identity, metadata.annotations, metadata.labels, explicit);
}

function readAnnotations(
  input: InterceptionSpec,
  identity: MeshIdentity,
  annotations: ReadonlyMap<string, string>,
  labels: ReadonlyMap<string, string> | undefined,
  explicit: ReadonlySet<keyof InterceptionSpec>,
): PodMetadataOutcome {
  const unknown = (why: string): PodMetadataOutcome => ({ spec: input, exclusionsKnown: false, why });
  const opaque = identity.opaqueAnnotations.find(({ key, values }) => {
    const text = annotations.get(key);
    return text !== undefined && text !== '' && (values === undefined || values.includes(text));
  });
  if (opaque) return unknown(`outbound exclusions unknown: the pod's ${opaque.key} sets rules not modelled here`);
  const spec: MutableSpec = { ...input };
  const refused = [
    ...identity.podAnnotations.filter((rule) => !applyRule(spec, rule, annotations.get(rule.key), explicit)),
    ...identity.annotationSwitches.filter(
      (rule) => !applySwitch(spec, rule, annotations.get(rule.annotation), explicit),
    ),
  ];
  if (refused.length > 0)
    return unknown(
      `outbound exclusions unknown: an annotation ${identity.cniPlugin ?? 'the plugin'} reads does not parse`,
    );
  const outbound = identity.podAnnotations.find((rule) => flagTarget(rule.flag)?.key === 'excludeOutboundPorts');
  const labelled = identity.labelExclusions.filter(({ label }) => (labels?.get(label) ?? '') !== '');
  for (const { flag, value } of labelled)
    applyRule(spec, { key: '', flag, merge: 'append', empty: 'value' }, value, new Set());
  const result = (why: string) => ({ spec, exclusionsKnown: why.startsWith('outbound exclusions from'), why });
  if (identity.namespaceAnnotationFallback && outbound && (annotations.get(outbound.key) ?? '') === '')
    return result(
      `outbound exclusions unknown: no ${outbound.key} on the pod (the namespace or ${identity.cniPlugin ?? 'the plugin'} may set them)`,
    );
  if (identity.labelExclusions.length > 0 && labels === undefined)
    return result('outbound exclusions unknown: no --pod-labels to tell whether a label adds exclusions');
  if (labelled.length > 0)
    return result(
      `outbound exclusions unknown: the pod's ${labelled[0]?.label ?? ''} label adds exclusions its metadata does not show`,
    );
  return result("outbound exclusions from the pod's annotations");
}

/** One annotation, by its rule; false when the plugin would refuse its value. */
function applyRule(
  spec: MutableSpec,
  rule: PodAnnotation,
  given: string | undefined,
  explicit: ReadonlySet<keyof InterceptionSpec>,
): boolean {
  let text = given;
  if (text === '' && rule.empty === 'absent') text = undefined;
  if (text === '' && rule.empty === 'refused') return false;
  text ??= rule.absent;
  if (text === undefined || text === rule.none) return true;
  const target = flagTarget(rule.flag);
  if (!target) throw new Error(`${rule.key}: no validate flag ${rule.flag}`);
  const parsed = target.parse(text.replace(/\s+/g, ''));
  if (!parsed.ok) return false;
  if (explicit.has(target.key)) return true;
  const value = rule.merge === 'append' ? merged(spec[target.key], parsed.value) : parsed.value;
  (spec as Record<string, unknown>)[target.key] = value;
  return true;
}

function applySwitch(
  spec: MutableSpec,
  rule: AnnotationSwitch,
  text: string | undefined,
  explicit: ReadonlySet<keyof InterceptionSpec>,
): boolean {
  if (text === undefined || rule.off.includes(text)) return true;
  if (!rule.on.includes(text)) return false;
  const target = flagTarget(rule.flag);
  const parsed = target?.parse('true');
  if (!target || !parsed?.ok) throw new Error(`${rule.annotation}: no validate switch ${rule.flag}`);
  if (!explicit.has(target.key) && (target.key !== 'dnsCapture' || spec.dnsCapture === undefined))
    (spec as Record<string, unknown>)[target.key] = parsed.value;
  return true;
}

/** A value added to a field's: lists joined, port sets united. */
function merged(current: unknown, added: unknown): unknown {
  if (Array.isArray(current) && Array.isArray(added)) return [...(current as unknown[]), ...(added as unknown[])];
  const ports = (value: unknown) => formatPortSet(value as PortSet);
  const union = parsePorts([ports(current), ports(added)].filter((text) => text !== '').join(','));
  return union.ok ? union.value : added;
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
