import type { MeshIdentity } from './mesh-identity.js';

/** Any mesh that redirects to two ports: Interlock's own container, no drop-in, no annotations. */
export const GENERIC = {
  name: 'generic',
  failureExitCode: 97,
  containers: { validator: 'interlock', proxy: undefined, rulesWriter: undefined },
  validatorUid: 65534,
  // Its node agent's port on the host network (`manifest --node-agent`): one per mesh, so two meshes' agents share a node.
  nodeAgentPort: 9482,
  cniPlugin: undefined,
  podMetadata: undefined,
  namespaceAnnotationFallback: false,
  podAnnotations: [],
  annotationSwitches: [],
  opaqueAnnotations: [],
  labelExclusions: [],
  admission: undefined,
  capturedPods: undefined,
  dropIn: undefined,
  // No ports of its own: --inbound-port and --outbound-port are required.
  capture: { inboundPort: 0, outboundPort: 0 },
} as const satisfies MeshIdentity;
