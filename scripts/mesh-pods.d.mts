/** See mesh-pods.mjs: the pods of the meshes' rendered injection outputs, as admission sees them. */
export interface MeshPod {
  /** `istio/1.29.0/hello.yaml.cni.injected#0`: the fixture file and the document in it. */
  readonly id: string;
  readonly mesh: 'linkerd' | 'istio';
  readonly validator: string | undefined;
  readonly pod: Record<string, unknown>;
}

export declare function meshPods(): MeshPod[];

export declare function admissionReview(pod: unknown, uid: string, overrides?: Record<string, unknown>): string;
