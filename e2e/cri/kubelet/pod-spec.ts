/** The parts of a v1 Pod the kubelet reads to run it (the manifest as the API server stores it). */
export interface SecurityContext {
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
  readonly runAsNonRoot?: boolean;
  readonly readOnlyRootFilesystem?: boolean;
  readonly allowPrivilegeEscalation?: boolean;
  readonly privileged?: boolean;
  readonly capabilities?: { readonly add?: readonly string[]; readonly drop?: readonly string[] };
  readonly seccompProfile?: { readonly type: string };
}

export interface ContainerSpec {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly env?: ReadonlyArray<{
    readonly name: string;
    readonly value?: string;
    readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath: string } };
  }>;
  readonly resources?: {
    readonly requests?: Readonly<Record<string, string>>;
    readonly limits?: Readonly<Record<string, string>>;
  };
  readonly securityContext?: SecurityContext;
  readonly terminationMessagePath?: string;
  readonly terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  /** `Always` on an init container: a native sidecar (it starts, and the next init container follows). */
  readonly restartPolicy?: 'Always';
  readonly volumeMounts?: ReadonlyArray<{
    readonly name: string;
    readonly mountPath: string;
    readonly readOnly?: boolean;
  }>;
}

/** A pod volume; the harness implements the kinds a validator mounts: downward API and emptyDir (Kuma's /tmp). */
export interface VolumeSpec {
  readonly name: string;
  readonly emptyDir?: { readonly medium?: string; readonly sizeLimit?: string };
  readonly downwardAPI?: {
    readonly items: ReadonlyArray<{ readonly path: string; readonly fieldRef: { readonly fieldPath: string } }>;
  };
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
}

export interface PodObject {
  readonly apiVersion?: 'v1';
  readonly kind?: 'Pod';
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly uid: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly ownerReferences?: readonly OwnerReference[];
    readonly resourceVersion?: string;
  };
  readonly spec: {
    readonly nodeName?: string;
    readonly restartPolicy?: 'Always' | 'OnFailure' | 'Never';
    readonly securityContext?: SecurityContext & { readonly supplementalGroups?: readonly number[] };
    readonly initContainers?: readonly ContainerSpec[];
    readonly containers: readonly ContainerSpec[];
    readonly volumes?: readonly VolumeSpec[];
  };
}
