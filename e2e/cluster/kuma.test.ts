import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { meshIdentity } from '../../src/mesh/meshes.js';
import {
  freshNamespace,
  IMAGE,
  kubectl,
  podsOf,
  setChain,
  STAND_IN,
  STATE,
  waitFor,
  type PodStatus,
  validatorBackedOff,
} from './cluster.js';

// Kuma on the real Kubernetes v1.33.13: a pod exactly as Kuma 2.14.3's injector renders it (its
// golden, kumahq/kuma's inject.34: `kuma.io/init-first`, kuma-validation first, `/usr/bin/kumactl
// install transparent-proxy-validator`, uid/gid 5678, a read-only root and its /tmp emptyDir) with
// Interlock's image in kuma-validation in place of kuma-init's (Kuma's validation image setting)
// and stand-in processes in kuma-sidecar (kuma-dp), the app and its own init container. kuma-cni
// is not built here (docs/testing.md): in its place the stand-in plugin writes Kuma's own rules
// golden (2.14.3 debian-12-default, IPv4 nft), chained after bridge and portmap as kuma-cni.
const KUMA = meshIdentity('kuma');
const NS = 'ilk-kuma';
const VALIDATOR = KUMA.containers.validator;
const MESH_FIXTURES = fileURLToPath(new URL('../../test/fixtures/meshes/kuma/2.14.3/', import.meta.url));
const MESHES_DOC = fileURLToPath(new URL('../../docs/meshes.md', import.meta.url));
/** The injector's rendered pod for the golden's secret-token volume; the API server mounts its own. */
const TOKEN_VOLUME = 'default-token-w7dxf';
/** Where the node's containerd (its own mount namespace) reads the rules from: the cluster's state. */
const RULES = join(STATE, 'kuma-2.14.3-debian-12-default.v4.rules');
/** kuma-sidecar's stand-in: it answers the readiness and liveness probes the injector gave it. */
const SIDECAR_STAND_IN = ['node', '-e', 'require("http").createServer((q, s) => s.end("ok")).listen(9901)'];

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  resources?: unknown;
  volumeMounts?: Array<{ name: string }>;
}
interface Pod {
  metadata: { name: string; namespace?: string; annotations: Record<string, string> };
  spec: { initContainers: Container[]; containers: Container[]; volumes: Array<{ name: string }> };
}

/**
 * The injector's pod. Its images swapped, the stand-ins' commands (and no resources of the
 * containers that run kuma-dp's stand-in and the app), and two changes a pod needs to run here:
 * the golden's secret token volume (a Secret of the injector's test) left out, and its
 * inbound port 15055 put back to the injector's default, the port Kuma's rules golden redirects to
 * (as e2e/cri/kuma.test.ts does). kuma-validation's command, args and securityContext are the golden's.
 */
async function injectedPod(name: string): Promise<Pod> {
  const pod = parse(await readFile(join(MESH_FIXTURES, 'injector/inject.34.golden.yaml'), 'utf8')) as Pod;
  const port = String(KUMA.capture.inboundPort);
  const untokened = (c: Container): Container => ({
    ...c,
    image: IMAGE,
    volumeMounts: (c.volumeMounts ?? []).filter((mount) => mount.name !== TOKEN_VOLUME),
  });
  pod.metadata = {
    ...pod.metadata,
    name,
    namespace: NS,
    annotations: { ...pod.metadata.annotations, 'kuma.io/transparent-proxying-inbound-port': port },
  };
  pod.spec.volumes = pod.spec.volumes.filter((volume) => volume.name !== TOKEN_VOLUME);
  pod.spec.initContainers = pod.spec.initContainers.map((c) =>
    c.name === VALIDATOR
      ? {
          ...untokened(c),
          args: c.args?.map((arg) =>
            arg.startsWith('--validation-server-port=') ? `--validation-server-port=${port}` : arg,
          ),
        }
      : { ...untokened(c), command: ['node', '-e', ''] },
  );
  // kuma-dp's resources are the proxy's (its ephemeral-storage request does not fit this node).
  pod.spec.containers = pod.spec.containers.map(({ args: _kumaDp, resources: _proxy, ...c }) => ({
    ...untokened(c),
    command: c.name === KUMA.containers.proxy ? SIDECAR_STAND_IN : STAND_IN,
  }));
  return pod;
}

/** The failure code docs/meshes.md gives Kuma ("**Failure code 98, not Kuma's 1.**"). */
async function documentedFailureCode(): Promise<number> {
  const match = /\*\*Failure code (\d+), not Kuma's 1\.\*\*/.exec(await readFile(MESHES_DOC, 'utf8'));
  if (!match) throw new Error('docs/meshes.md does not state the Kuma failure code');
  return Number(match[1]);
}

const validatorOf = (pod: PodStatus) => pod.status.initContainerStatuses?.find((c) => c.name === VALIDATOR);
const podNamed = async (name: string) => (await podsOf(NS, 'run=busybox')).find((p) => p.metadata.name === name);

beforeAll(async () => {
  setChain(undefined);
  // Upstream's harness writes `ifPlaceholder` for the loopback interface's name; it is `lo` in a pod.
  const golden = await readFile(join(MESH_FIXTURES, 'transparentproxy/debian-12-default.iptables-nft.golden'), 'utf8');
  await writeFile(RULES, golden.replaceAll('ifPlaceholder', 'lo'));
  await freshNamespace(NS);
}, 180_000);
afterAll(async () => {
  setChain(undefined);
  await rm(RULES, { force: true });
  await kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
});

describe("Kuma 2.14.3's injected pod on a real kubelet, kuma-validation's image swapped for Interlock's", () => {
  it("kuma-cni not in the chain: Init:CrashLoopBackOff, Kuma's documented exit code and the termination message in kubectl describe", async () => {
    const documented = await documentedFailureCode();
    expect(documented).toBe(KUMA.failureExitCode);
    setChain(undefined);
    await kubectl(['apply', '-f', '-'], JSON.stringify(await injectedPod('kuma-unmeshed')));
    const { pod: blocked } = await validatorBackedOff(VALIDATOR, () => podNamed('kuma-unmeshed'), 90_000);
    const terminated = validatorOf(blocked)?.lastState.terminated;
    expect(terminated?.exitCode).toBe(documented);
    expect(terminated?.message).toMatch(/^InterceptionMissing: /m);
    // The application's own init container never ran (kuma.io/init-first), nor did the app.
    expect(blocked.status.initContainerStatuses?.find((c) => c.name === 'init')?.restartCount).toBe(0);
    expect(blocked.status.containerStatuses?.every((c) => !c.ready)).toBe(true);
    await waitFor(
      'kubectl get to show Init:CrashLoopBackOff',
      async () => /\sInit:CrashLoopBackOff\s/.test(await kubectl(['get', 'pod', '-n', NS, 'kuma-unmeshed'])),
      60_000,
    );
    const described = await kubectl(['describe', 'pod', '-n', NS, 'kuma-unmeshed']);
    expect(described).toMatch(new RegExp(`Back-off restarting failed container ${VALIDATOR}`));
    expect(described).toMatch(new RegExp(`Exit Code:\\s+${documented}\\b`));
    expect(described).toContain('InterceptionMissing');
  });

  it("kuma-cni chained, writing Kuma's rules: kuma-validation exits 0, then the app's init container, and the app starts", async () => {
    setChain(RULES, KUMA.cniPlugin);
    await kubectl(['apply', '-f', '-'], JSON.stringify(await injectedPod('kuma-meshed')));
    const started = await waitFor(
      'the meshed pod running with every container started',
      async () => {
        const pod = await podNamed('kuma-meshed');
        const all = pod?.status.containerStatuses ?? [];
        return pod?.status.phase === 'Running' && all.length === 2 && all.every((c) => c.started) ? pod : undefined;
      },
      90_000,
    );
    const validator = validatorOf(started);
    expect(validator?.restartCount).toBe(0);
    expect(validator?.state.terminated?.exitCode).toBe(0);
    expect(validator?.state.terminated?.message).toMatch(/^Intercepted: /m);
    const order = (started.status.initContainerStatuses ?? []).map((c) => c.name);
    expect(order).toEqual([VALIDATOR, 'init']);
  });
});
