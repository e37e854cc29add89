/**
 * Every reason Interlock can give, in one union: the first word of a termination message, the
 * `reason` of a check, an Event's reason. docs/reference.md's reasons table is generated from REASONS
 * (`npm run docs`) and tested against it.
 */
export const REASONS = {
  Intercepted:
    'pass: every family and every probed port proven by an arrival from our own socket, every required check passed',
  PodNetworkMissing: 'no usable address or route in a family that must be proven: the primary CNI did not run',
  InterceptionMissing:
    'a probe was not captured; the sentence says how it ended (refused: a REDIRECT to the wrong port or none; ICMP error: it left the pod; a stranger or relay answered; no answer)',
  RulesMismatch:
    'the rules send a region of packets somewhere the configuration forbids; the sentence names the region and the table, chain, position and rule',
  MarkRouteMissing:
    "the rules pass but the pod lacks the policy route they rely on (Istio ambient: `ip rule fwmark 0x111/0xfff lookup 100` or table 100's `local` default route via lo); the sentence names the family and what is missing",
  RulesUnknownMatch: 'the answer depends on a match the engine does not model; never a pass',
  RulesUnknown: 'the rules could not be decided; never a pass',
  RulesUnparseable: 'a dump of the rules does not parse',
  RulesTooLarge:
    "a dump of the rules is over the size caps (a pod's live rules: 1 MiB of iptables-save, 2 MiB of nft JSON, a reading child's 64 MiB of memory; explain's files: 16 MiB; 128 MiB of estimated memory for one analysis): the sentence names the table and the size; refused, never half-read (validate exits with the failure code, explain 65)",
  RulesUnreadable: '--rules required and the rules cannot be read',
  RulesNotInspected: 'the rules were not read (no capability, --rules auto); the probe alone decided',
  RulesEngineError: 'the rules engine failed; an internal error, never a pass',
  AmbientNotCaptured:
    "Istio ambient: the probe connection was not redirected into ztunnel's port 15001 in the pod (it left the pod: an ICMP error, silence, or a peer outside answered); retried until --timeout",
  ZtunnelNotListening:
    "Istio ambient: ztunnel's ports (15001, 15006, 15008) are not all listening in the pod: a redirected probe was refused, or a port is unbound; the node agent's re-check posts it as a Warning when a running pod's rules are intact and a listener is gone: an outage, not CaptureLost",
  ZtunnelArrivalUnseen:
    "Istio ambient: something accepted the probe and ztunnel's port listens, but the pod's socket tables hold no connection on it from the probe's socket (a relay, a stranger, or a capture elsewhere)",
  SocketTableUnreadable: "Istio ambient: the pod's /proc/net/tcp or tcp6 cannot be read or parsed; never a pass",
  ProbePortInUse: "the proxy's redirect port is already bound by another process in the pod",
  ProbePortUnbindable: 'the probe listener cannot bind for another reason',
  ProbeUnroutable: 'no routed address the configuration captures',
  ProbeIdentityExcluded: 'the validator runs as an identity whose traffic the rules exclude (exit 64)',
  NothingToProbe: 'the configuration captures no outbound traffic to probe (exit 64)',
  NotProven: 'a required check did not run',
  ValidationFailed: 'a check failed without a more specific reason',
  CniConfigBroken: "the node's CNI configuration will not set pods up with the mesh (interlock cni-check)",
  CniConfigUnreadable: 'the CNI configuration directory cannot be read',
  CniConfigTooLarge: 'the CNI configuration directory holds more than one audit reads (files or bytes)',
  ValidationTimeout:
    'no verdict by the timeout plus 500 ms, the run stalled with nothing left to wait for, or the deadline ended a probe before it observed anything: the sentence names the phase and what was pending; exits with the failure code',
  Interrupted:
    'SIGTERM or SIGINT before a verdict: the sentence names the phase and what was still pending; exits with the failure code',
  ConfigInvalid: 'invalid flags, environment or configuration',
  InternalError: 'a bug: the validator failed unexpectedly',
  ManifestUnparseable: 'Kubernetes YAML given to `interlock inject` does not parse (line and column named)',
  ManifestUnreadable:
    '`interlock inject` cannot read its input (missing, unreadable, or not a regular file: a FIFO or a device is refused, never waited on)',
  ManifestTooLarge:
    '`interlock inject` input over the 16 MiB cap, or one document over 1 MiB that is not a kubectl List',
  ManifestRefused:
    '`interlock inject` will not edit this pod: hostNetwork, a mesh webhook injects it at admission, a merge key or shared anchor, a foreign container under a validator name, a non-list initContainers',
  ManifestOrder:
    'the validator is placed before an init container that writes the rules, or after the native sidecar proxy whose port it binds',
  KubeUnavailable:
    'no Kubernetes API could be found or its credentials could not be read (KUBECONFIG, in-cluster service account)',
  KubeApiError: 'the Kubernetes API did not answer in time, could not be reached, or refused the request',
  AdmissionRequestInvalid:
    'the admission webhook could not read a request (not an AdmissionReview v1, malformed, oversized or too slow); answered per --on-error',
} as const;

export type Reason = keyof typeof REASONS;

export function isReason(value: string): value is Reason {
  return Object.hasOwn(REASONS, value);
}
