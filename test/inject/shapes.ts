// The fields of the Kubernetes objects the inject and manifest tests read, as those commands write
// them. Type aliases, not interfaces, so a decoded `Record<string, unknown>` may be read as one. A
// test that reads a field its object lacks fails on that read, as it should.

export type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef: { fieldPath: string } } };

export type Container = {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env: EnvVar[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown> & { runAsUser?: number };
  terminationMessagePolicy?: string;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
};

export type PodSpec = { initContainers: Container[]; containers: Container[] };

/** A Pod's spec, or a workload's with its template (a CronJob's one level further down). */
export type WorkloadSpec = PodSpec & {
  template: { spec: PodSpec };
  jobTemplate: { spec: { template: { spec: PodSpec } } };
};

export type KubeDocument = {
  apiVersion?: string;
  kind: string;
  metadata?: { name: string };
  spec: WorkloadSpec;
  items: KubeDocument[];
};
