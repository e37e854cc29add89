import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshPods } from '../../scripts/mesh-pods.mjs';
import {
  chainMeshPlugin,
  freshNamespace,
  IMAGE,
  kubectl,
  podsOf,
  setChain,
  STAND_IN,
  waitFor,
  type PodStatus,
  validatorBackedOff,
} from './cluster.js';
import { installIstioCni, istioCniLog, removeIstioCni } from './istio-cni.js';

// Istio in sidecar mode on the real Kubernetes v1.33.13 with the real istio-cni 1.27.0 chained
// after bridge as its chart chains it (e2e/cluster/istio-cni.ts): a pod exactly as Istio 1.27.0's
// injector renders it (its golden, test/fixtures/meshes/istio/1.27.0), with Interlock's image in
// istio-validation in place of proxyv2's (what values.global.proxy_init.image does) and stand-in
// processes in istio-proxy and the app. istio-cni reads that pod from the API server, decides from
// its containers and annotations, and writes its rules into the pod's network namespace itself.
// istiod does not run here: the one thing of its the pod needs, the istio-ca-root-cert ConfigMap
// it publishes into each namespace, is created by the test.
const FIXTURE = 'istio/1.27.0/hello.yaml.cni.injected';
const VALIDATOR = 'istio-validation';
const NS = 'ilk-istio';
/** A namespace the operator excluded (the chart's excludeNamespaces) where the injector still injects. */
const EXCLUDED_NS = 'ilk-istio-excluded';
/** The ruleset istio-cni's own code wrote for the injector's defaults, recorded (the corpus's README). */
const RECORDED = fileURLToPath(
  new URL('../../test/fixtures/corpus/istio-cni/basic/iptables-nft-save.v4.txt', import.meta.url),
);
/** istio-proxy's stand-in: it answers the readiness and startup probes the injector gave it. */
const PROXY_STAND_IN = [
  'node',
  '-e',
  'require("http").createServer((q, s) => s.end(q.url === "/healthz/ready" ? "ok" : "")).listen(15021)',
];

interface Container {
  name: string;
  image: string;
  command?: readonly string[];
  lifecycle?: unknown;
}
interface Pod {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
  spec: { initContainers?: Container[]; containers: Container[] };
}

/** The injector's pod; only images, and the commands of the containers that are not Interlock, changed. */
function injectedPod(name: string, namespace = NS): Pod {
  const fixture = meshPods().find((c: { id: string; validator?: string }) => c.id === `${FIXTURE}#0`);
  if (!fixture) throw new Error(`${FIXTURE}: no pod`);
  const pod = structuredClone(fixture.pod) as unknown as Pod;
  pod.metadata = { ...pod.metadata, name, namespace };
  pod.spec.initContainers = pod.spec.initContainers?.map((c): Container => {
    if (c.name === VALIDATOR) return { ...c, image: IMAGE };
    // The proxy's args stay (istio-cni reads `proxy sidecar` from them); its preStop drain is the proxy's.
    const { lifecycle: _drain, ...proxy } = c;
    return { ...proxy, image: IMAGE, command: PROXY_STAND_IN };
  });
  pod.spec.containers = pod.spec.containers.map((c) => ({ ...c, image: IMAGE, command: STAND_IN }));
  return pod;
}

/** Points the node's chain at `entry` and gives containerd's watcher a moment to reload it. */
async function chain(entry: Record<string, unknown> | undefined): Promise<void> {
  chainMeshPlugin(entry);
  await sleep(2_000);
}

/** The plugin's log: one JSON object a line, with the pod it worked on as `pod` where it names one. */
function logged(): Array<{ msg: string; pod?: string }> {
  return istioCniLog()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; pod?: string });
}

/** The nat table istio-cni logged as the pod's final IPv4 state after it programmed `pod`. */
function natTableWritten(pod: string): string | undefined {
  const lines = logged();
  const start = lines.findIndex((line) => line.msg.includes(`Start iptables configuration for ${pod} `));
  const state = lines.slice(start).find((line) => line.msg.startsWith('Final iptables state (IPv4)'));
  return start < 0 ? undefined : natTable(state?.msg ?? '');
}
const natTable = (save: string): string | undefined => /^\*nat\n[\s\S]*?^COMMIT$/m.exec(save)?.[0];

const validatorOf = (pod: PodStatus) => pod.status.initContainerStatuses?.find((c) => c.name === VALIDATOR);
let istioCni: Record<string, unknown>;

beforeAll(async () => {
  setChain(undefined);
  // Built on first use (about 7.5 minutes cold; scripts/test.sh builds it before the projects).
  const entry = await installIstioCni();
  istioCni = { ...entry, exclude_namespaces: [...(entry['exclude_namespaces'] as string[]), EXCLUDED_NS] };
  for (const namespace of [NS, EXCLUDED_NS]) {
    await freshNamespace(namespace);
    const ca = await kubectl([
      'get',
      'configmap',
      'kube-root-ca.crt',
      '-n',
      namespace,
      '-o',
      'jsonpath={.data.ca\\.crt}',
    ]);
    await kubectl(['create', 'configmap', 'istio-ca-root-cert', '-n', namespace, `--from-literal=root-cert.pem=${ca}`]);
  }
}, 900_000);
afterAll(async () => {
  setChain(undefined);
  await kubectl(['delete', 'namespace', NS, EXCLUDED_NS, '--wait=false']).catch(() => undefined);
  await removeIstioCni();
}, 180_000);

describe('Istio sidecar mode, with the real istio-cni 1.27.0 on a real kubelet', () => {
  it('istio-cni not in the chain: Init:CrashLoopBackOff, exit 126 and the termination message in kubectl describe', async () => {
    await chain(undefined);
    await kubectl(['apply', '-f', '-'], JSON.stringify(injectedPod('hello-unmeshed')));
    const { pod: blocked } = await validatorBackedOff(
      VALIDATOR,
      async () => (await podsOf(NS, 'app=hello')).find((p) => p.metadata.name === 'hello-unmeshed'),
      180_000,
    );
    const terminated = validatorOf(blocked)?.lastState.terminated;
    expect(terminated?.exitCode).toBe(126);
    expect(terminated?.message).toMatch(/InterceptionMissing/);
    expect(blocked.status.containerStatuses?.every((c) => !c.ready)).toBe(true);
    // As an operator sees it (the status flips to Running for each retry, so looked for until seen).
    await waitFor(
      'kubectl get to show Init:CrashLoopBackOff',
      async () => /\sInit:CrashLoopBackOff\s/.test(await kubectl(['get', 'pod', '-n', NS, 'hello-unmeshed'])),
      120_000,
    );
    const described = await kubectl(['describe', 'pod', '-n', NS, 'hello-unmeshed']);
    expect(described).toMatch(/Back-off restarting failed container istio-validation/);
    expect(described).toMatch(/Exit Code:\s+126/);
    expect(described).toContain('InterceptionMissing');
    // The real plugin was not asked: nothing in its log names this pod.
    expect(istioCniLog()).not.toContain('hello-unmeshed');
  });

  it('istio-cni chained after bridge: it writes the rules, istio-validation exits 0 and the app starts', async () => {
    await chain(istioCni);
    await kubectl(['apply', '-f', '-'], JSON.stringify(injectedPod('hello-meshed')));
    const running = await waitFor(
      'the meshed pod running with every container ready',
      async () => {
        const [pod] = (await podsOf(NS, 'app=hello')).filter((p) => p.metadata.name === 'hello-meshed');
        return pod?.status.phase === 'Running' && pod.status.containerStatuses?.every((c) => c.ready) ? pod : undefined;
      },
      180_000,
    );
    expect(validatorOf(running)?.restartCount).toBe(0);
    const status = JSON.parse(await kubectl(['get', 'pod', '-n', NS, 'hello-meshed', '-o', 'json'])) as {
      status: { initContainerStatuses: Array<{ name: string; state: { terminated?: { exitCode: number } } }> };
    };
    const validator = status.status.initContainerStatuses.find((c) => c.name === VALIDATOR);
    expect(validator?.state.terminated?.exitCode).toBe(0);
    // istio-cni itself programmed this pod (istio-iptables' code, in the plugin's process), and
    // wrote exactly the ruleset the unit and CRI tests take from the corpus.
    const written = natTableWritten('hello-meshed');
    expect(written, istioCniLog()).toBeDefined();
    expect(written).toBe(natTable(readFileSync(RECORDED, 'utf8')));
  });

  it("istio-cni chained, the pod's namespace excluded: the plugin skips it and istio-validation exits 126", async () => {
    await chain(istioCni);
    await kubectl(['apply', '-f', '-'], JSON.stringify(injectedPod('hello-excluded', EXCLUDED_NS)));
    const blocked = await waitFor(
      'istio-validation failing in the excluded namespace',
      async () => {
        const [pod] = await podsOf(EXCLUDED_NS, 'app=hello');
        const validator = pod && validatorOf(pod);
        return validator?.lastState.terminated ? pod : undefined;
      },
      180_000,
    );
    expect(validatorOf(blocked)?.lastState.terminated?.exitCode).toBe(126);
    expect(validatorOf(blocked)?.lastState.terminated?.message).toMatch(/InterceptionMissing/);
    const skipped = logged().filter((line) => line.pod === `${EXCLUDED_NS}/hello-excluded`);
    expect(skipped.map((line) => line.msg)).toEqual(['pod namespace excluded']);
    expect(natTableWritten('hello-excluded')).toBeUndefined();
  });
});
