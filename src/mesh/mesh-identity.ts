import type { IpAddress } from '../addr/ip.js';
import type { PortSet } from '../addr/port-set.js';
import type { MeshCniFacts } from './cni-install-facts.js';

/**
 * Who owns the proxy and its rules: a sidecar in the pod (identified by uid/gid), or a node proxy
 * that enters the pod's namespace (Istio ambient's ztunnel, identified by its socket mark).
 */
export type Dataplane = 'sidecar' | 'ambient';

/** A packet-mark test: `mark & mask == value`. */
export interface MarkMatch {
  readonly value: number;
  readonly mask: number;
}

/** The policy route the rules rely on: `ip rule fwmark <mark> lookup <table>`, local default routes via lo there. */
export interface MarkRoute {
  readonly mark: MarkMatch;
  readonly table: number;
}

/**
 * The fields of the interception spec a mesh's preset sets; every other field is "capture
 * everything, exclude nothing" (src/config/interception.ts composes the whole spec).
 */
export interface MeshCapture {
  /** Port the proxy accepts redirected inbound connections on; 0: none of its own (a flag must give it). */
  readonly inboundPort: number;
  /** Port the proxy accepts redirected outbound connections on; 0: none of its own. */
  readonly outboundPort: number;
  readonly proxyUids?: readonly number[];
  readonly proxyGids?: readonly number[];
  readonly excludeInboundPorts?: PortSet;
  readonly excludeOutboundPorts?: PortSet;
  readonly dnsPort?: number;
  readonly dnsRulesFirst?: boolean;
  readonly inboundTunnelPort?: number;
  readonly proxyLoopbackToInbound?: boolean;
  readonly dataplane?: Dataplane;
  /** DNS capture on (to every server when `servers` is empty); absent: off. */
  readonly dnsCapture?: { readonly servers: readonly IpAddress[] };
  readonly proxyMarks?: readonly MarkMatch[];
  readonly acceptedMarks?: readonly MarkMatch[];
  readonly hostProbeAddresses?: readonly IpAddress[];
  readonly markRoute?: MarkRoute;
}

/**
 * Which pods a node-level dataplane captures by itself, so Interlock adds its validator to them
 * (Istio ambient: the webhook's selectors and inject's refusals read this): a label on the
 * namespace or the pod turns capture on, the pod's own `off` value opts it out, and a pod
 * carrying `sidecarAnnotation` (a sidecar injector ran) is never captured.
 */
export interface CapturedPods {
  readonly label: string;
  readonly on: string;
  readonly off: string;
  readonly sidecarAnnotation: string;
  /** The annotation (and value) the mesh's node agent writes once it has captured the pod: a claim, never the proof. */
  readonly enrolledAnnotation: string;
  readonly enrolledValue: string;
}

/**
 * The argv shapes of the meshes' own validators, by the program that reads them: src/compat maps
 * each onto `interlock validate` (the mapping is code, keyed by this name).
 */
export type DropInArgv = 'linkerd2-network-validator' | 'istio-iptables' | 'kumactl';

/** How the mesh renders its own validator container, which Interlock stands in for unchanged. */
export interface DropIn {
  readonly argv: DropInArgv;
  /** The first words of the container's argv that stand for this drop-in, matched exactly. */
  readonly programs: readonly string[];
  /**
   * The command the webhook writes in the mesh's place, as Interlock's image runs it
   * (image/Dockerfile); undefined: the image's entrypoint (`interlock validate`) reads the args.
   * Also the only commands the node agent trusts a validator's failure from.
   */
  readonly command: readonly string[] | undefined;
  /** Flags only this mesh's validator takes: an argv carrying one is this drop-in, program name or not. */
  readonly ownFlags: readonly string[];
  /**
   * Appended to the rules writer's args, they make its argv the validator's (Istio: istio-init's
   * options with validation only describe what it wrote); undefined when the writer's argv is not.
   */
  readonly rulesWriterValidation: readonly string[] | undefined;
  /**
   * Volumes the mesh's injector mounts into its validator, which the node agent accepts on a
   * drop-in run (none of them over Interlock's files).
   */
  readonly mountPaths: readonly string[];
}

/** Where a pod or namespace carries a switch: a label or an annotation, by key. */
export interface MetadataKey {
  readonly in: 'labels' | 'annotations';
  readonly key: string;
}

/** A namespace switch: the key with one of these values, or (undefined) with any value. */
export interface NamespaceSwitch extends MetadataKey {
  readonly values: readonly string[] | undefined;
}

/** How the mesh's own injector selects pods at admission (where it adds its own validator). */
export interface AdmissionSelector {
  /** The injector, as a sentence names it: "Linkerd's proxy injector". */
  readonly injector: string;
  /** The pod's own switch, read in this order; the first present decides, else the namespace's. */
  readonly podSwitch: readonly MetadataKey[];
  /** The pod switch's values that turn injection on (any other value turns it off). */
  readonly switchOn: readonly string[];
  /** Any of these on the namespace turns injection on for pods without a switch. */
  readonly namespaceSwitches: readonly NamespaceSwitch[];
  /** Pod annotations that say the injector has already run (its proxy container says so too). */
  readonly injectedAnnotations: readonly string[];
}

/**
 * A pod annotation that turns on a validate switch (`sidecar.istio.io/interceptionMode: TPROXY`):
 * one of `on` turns it on, one of `off` leaves the preset's value, any other value is one the
 * plugin refuses (the pod's rules are then unknown).
 */
export interface AnnotationSwitch {
  readonly annotation: string;
  readonly on: readonly string[];
  readonly off: readonly string[];
  readonly flag: string;
}

/** What an empty annotation value means to the mesh's plugin: no annotation, the empty value itself, or an error. */
export type EmptyAnnotation = 'absent' | 'value' | 'refused';

/**
 * A pod annotation the mesh's CNI plugin (or injector) turns into a setting of the pod's rules, as
 * data: the validate flag whose own parser reads its value and whose field it sets, how it meets
 * the field's value (the preset's or an earlier annotation's), what an empty value means, and the
 * plugin's value when the pod has none (undefined: the preset's stands).
 */
export interface PodAnnotation {
  readonly key: string;
  readonly flag: string;
  /** `replace`: the value is the field; `append`: the value is added to what the field holds. */
  readonly merge: 'replace' | 'append';
  readonly empty: EmptyAnnotation;
  readonly absent?: string;
  /** A value that stands for nothing at all (Kuma's application probe port `0`). */
  readonly none?: string;
}

/**
 * An annotation under which the plugin writes rules the metadata reader does not model (a whole
 * config, eBPF, per-uid exclusions): present and non-empty, with one of `values` when given, the
 * pod's rules are unknown.
 */
export interface OpaqueAnnotation {
  readonly key: string;
  readonly values?: readonly string[];
}

/**
 * A pod label under which the plugin adds exclusions the pod's metadata cannot show (linkerd-cni
 * skips the API server's ports, `value` being its fallback, for control-plane pods).
 */
export interface LabelExclusion {
  readonly label: string;
  readonly flag: string;
  readonly value: string;
}

/**
 * How the mesh's CNI plugin reads a pod's metadata when it writes the pod's rules:
 * `annotations`, by the module's data alone (podAnnotations, annotationSwitches, opaqueAnnotations,
 * labelExclusions; src/config/pod-metadata.ts reads them generically); `istio-cni-ambient` also
 * applies istio-cni's Go-boolean per-pod overrides of an ambient pod (code, keyed by this name).
 */
export type PodMetadataRules = 'annotations' | 'istio-cni-ambient';

/** Everything that makes a mesh itself, as data: one module per mesh (src/mesh/), one registry line. */
export interface MeshIdentity {
  /** `--mesh NAME`. */
  readonly name: string;
  /** The validator's exit code on failure, the one the mesh's repair controller recognises. */
  readonly failureExitCode: number;
  readonly containers: {
    /** The init container name the mesh's injector gives its validator and its repair controller watches. */
    readonly validator: string;
    /** The proxy container the mesh injects; undefined when Interlock cannot name it. */
    readonly proxy: string | undefined;
    /** The init container that writes the NAT rules when the mesh runs without its CNI plugin. */
    readonly rulesWriter: string | undefined;
  };
  /** The uid (and gid) a validator Interlock prints runs as without the rules check. */
  readonly validatorUid: number;
  /**
   * The node agent's `--listen` port as `manifest --node-agent` prints it: each mesh its own (and
   * none the single-agent release's 9477), so one agent per mesh runs on a node's host network.
   */
  readonly nodeAgentPort: number;
  /** The namespace its install puts its control plane in by default: never Interlock's to own. */
  readonly controlPlaneNamespace?: string;
  /** How `check --pre` tells its CNI mode is installed and on; undefined: it is not checked. */
  readonly cniInstall?: MeshCniFacts;
  /** The type of the mesh's chained CNI plugin; undefined: cni-check needs --mesh-plugin. */
  readonly cniPlugin: string | undefined;
  /** How its CNI plugin reads the pod's metadata; undefined: the validator reads none. */
  readonly podMetadata: PodMetadataRules | undefined;
  /**
   * Its CNI plugin reads an annotation from the pod's namespace when the pod has none (linkerd-cni;
   * test/fixtures/meshes/facts/linkerd-cni-plugin.json): the node agent's re-check reads it too.
   */
  readonly namespaceAnnotationFallback: boolean;
  /**
   * Pod annotations the mesh's injector or CNI plugin turns into settings of the pod's rules, read
   * in this order (a later one meeting an earlier one's field by its merge rule); inject turns
   * each present one into its flag where the mesh's own argv does not carry it.
   */
  readonly podAnnotations: readonly PodAnnotation[];
  readonly annotationSwitches: readonly AnnotationSwitch[];
  readonly opaqueAnnotations: readonly OpaqueAnnotation[];
  readonly labelExclusions: readonly LabelExclusion[];
  readonly admission: AdmissionSelector | undefined;
  /** The pods the mesh captures without an injector (ambient), to which Interlock adds its validator. */
  readonly capturedPods: CapturedPods | undefined;
  readonly dropIn: DropIn | undefined;
  readonly capture: MeshCapture;
}
