import type { KubeApi } from '../../test/harness/kube-api/server.js';
import type { Kubelet, PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec, PodObject } from './kubelet/pod-spec.js';
import { volumesFor } from './scenario.js';

/**
 * The ReplicaSet controller and the kubelet's pod worker, for one ReplicaSet of one pod: a pod
 * the API deletes is stopped on the node (its sandbox removed, as the kubelet does) and replaced
 * by a new pod with a new name and uid, which the kubelet runs in a fresh sandbox.
 */
export class ReplicaSetStandIn {
  readonly runs: PodRun[] = [];
  private readonly unsubscribe: () => void;
  private pending: Promise<unknown> = Promise.resolve();
  private sequence = 0;

  constructor(
    private readonly api: KubeApi,
    private readonly kubelet: Kubelet,
    readonly name: string,
    readonly uid: string,
    private readonly initContainers: readonly ContainerSpec[],
    private readonly containers: readonly ContainerSpec[],
    /** Replacements stop here: a loop in the system under test must not loop the test. */
    private readonly maxPods: number,
    /** Runs before each replacement is created (a test fixes the node's CNI there). */
    private readonly beforeReplace: () => Promise<void> = async () => undefined,
    /** Labels beside `app` on every pod (a mesh's enrolment label, as the pod template carries it). */
    private readonly labels: Readonly<Record<string, string>> = {},
  ) {
    this.unsubscribe = api.store.subscribe((change) => {
      if (change.type !== 'DELETED' || change.resource !== 'pods') return;
      const run = this.runs.find((candidate) => candidate.pod.metadata.uid === change.object.metadata.uid);
      if (run) this.pending = this.pending.then(() => this.replace(run));
    });
  }

  /** Creates a pod through the API (the server assigns its uid) and starts it on the node. */
  async create(): Promise<PodRun> {
    this.sequence += 1;
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${this.name}-${this.sequence}`,
        namespace: 'default',
        labels: { app: this.name, ...this.labels },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: this.name, uid: this.uid, controller: true },
        ],
      },
      spec: {
        nodeName: 'node-a',
        restartPolicy: 'Always',
        initContainers: this.initContainers,
        containers: this.containers,
        volumes: volumesFor([...this.initContainers, ...this.containers]),
      },
    };
    const response = await fetch(`${this.api.url}/api/v1/namespaces/default/pods`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 201)
      throw new Error(`creating ${body.metadata.name}: ${response.status} ${await response.text()}`);
    const run = this.kubelet.start((await response.json()) as PodObject);
    this.runs.push(run);
    return run;
  }

  private async replace(run: PodRun): Promise<void> {
    await run.stop();
    if (this.runs.length >= this.maxPods) return;
    await this.beforeReplace();
    await this.create();
  }

  /** Waits for replacements under way, then stops watching; pods still running are the test's to stop. */
  async close(): Promise<void> {
    this.unsubscribe();
    await this.pending;
  }
}
