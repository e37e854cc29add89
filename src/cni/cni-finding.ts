/** Every kind of problem the CNI audit reports: data for the node agent, the metric and tests. */
export const CNI_FINDING_CODES = {
  NoConfig: 'the directory holds no configuration the runtime counts',
  LoadFails: 'the runtime cannot load the file it reads first, so it sets up no pod network',
  PartialFile: 'a file ends in the middle of its JSON after every re-read (a writer mid-write or dead)',
  MeshFirst:
    "the mesh plugin comes first in the winning chain (a standalone mesh file wins): linkerd2#2219's scenario 2",
  MeshMissing: "the winning file's chain has no mesh plugin: linkerd2#2219's scenario 3",
  MultusDelegateMissing:
    "the winning file is Multus's, and the network it delegates the pod's primary network to is not there",
  PodAttachmentMissing:
    'a meshed pod of the node does not get the non-chained mesh plugin: its k8s.v1.cni.cncf.io/networks annotation is absent or refused, or the NetworkAttachmentDefinition it names is missing or has no mesh plugin',
  AttachmentUnread:
    "the node agent could not read the pods or NetworkAttachmentDefinitions it needs to judge a non-chained mesh plugin's attachments",
  PluginMissing: 'a plugin of the winning chain has no binary',
  PluginNotExecutable: 'a plugin binary of the winning chain cannot be executed',
  PluginNameInvalid: 'a plugin type libcni refuses to look up',
  VersionUnsupported: "a plugin of the winning chain does not support the list's cniVersion",
  VersionUnknown: 'a plugin of the winning chain did not answer CNI_COMMAND=VERSION',
  NetworkNameInvalid: 'the network name fails libcni ValidateNetworkName, so every ADD fails',
  DefaultNetworkMissing: 'CRI-O is pinned to a network name no loadable file has',
  Leftover: 'a configuration the runtime does not load names a plugin with no binary',
  PassedOver: 'CRI-O skips a file it cannot load or validate',
  RuntimeDisagrees:
    'the runtime (asked over the CRI) loaded another file, directory or plugin directory than the audit predicts, or is another runtime than --runtime',
  RuntimeLoadFailed: 'containerd reports that its last load of the CNI configuration failed (lastCNILoadStatus)',
  RuntimeUnobserved:
    "the runtime was asked what it loaded and the answer cannot be compared: none answered (a warning when only the default sockets were tried), CRI-O's Status does not say (a warning), or an answer of no known shape",
} as const;

export type CniFindingCode = keyof typeof CNI_FINDING_CODES;

export interface CniFinding {
  readonly code: CniFindingCode;
  /** Errors make the node unhealthy; warnings are hazards that do not affect pods today. */
  readonly severity: 'error' | 'warning';
  readonly file?: string;
  /** What is wrong and what the runtime will do about it, in one sentence. */
  readonly message: string;
}
