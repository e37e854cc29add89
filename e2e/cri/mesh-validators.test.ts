import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CriNode } from './cri-node.js';
import { ManualClock } from './kubelet/backoff.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import type { ContainerSpec, PodObject } from './kubelet/pod-spec.js';
import { MemoryPublisher } from './kubelet/publisher.js';
import {
  bridge,
  conflist,
  injectedPod,
  manifestContainer,
  MESH_PLUGIN,
  podOf,
  portmap,
  type Mesh,
} from './scenario.js';
import { startNode } from './suite-node.js';
import { fileURLToPath } from 'node:url';

// Both meshes' validators as their injectors render them (test/fixtures/meshes, the meshes' own
// goldens) and as `interlock manifest` prints them, run by the CRI exactly as specified: command,
// args, env, securityContext. Each must pass on a node whose CNI chain writes that mesh's rules,
// and fail with the mesh's failure code where the chain lacks the mesh.
const CORPUS = fileURLToPath(new URL('../../test/fixtures/corpus/', import.meta.url));
const FAILURE: Record<Mesh, number> = { linkerd: 95, istio: 126 };

let node: CriNode;
let index = 40;
const pods: PodRun[] = [];
beforeAll(async () => {
  node = await startNode();
}, 300_000);
afterAll(async () => {
  await node?.stop();
});
afterEach(async () => {
  // As the kubelet tears pods down: each on its own, not one after the other.
  await Promise.all(pods.splice(0).map((pod) => pod.stop()));
});

/** Points the node's chain at a mesh's rules (or at no mesh), and waits for the CRI to load it. */
async function chain(mesh: Mesh, rules: string | undefined): Promise<void> {
  index += 1;
  const plugins = [
    bridge(node, index),
    portmap,
    ...(rules ? [{ type: MESH_PLUGIN[mesh], rulesFile: `${CORPUS}${rules}` }] : []),
  ];
  await node.clearConfigs();
  await node.writeConfig('10-primary.conflist', conflist(plugins));
  await node.waitCniLoaded(new RegExp(`ilkcri${index}\\b`));
}

function start(pod: PodObject, clock?: ManualClock): PodRun {
  const kubelet = new Kubelet({
    node,
    nodeName: 'node-a',
    publisher: new MemoryPublisher(),
    ...(clock ? { clock } : {}),
  });
  const run = kubelet.start(pod);
  pods.push(run);
  return run;
}

/** Runs the pod until the validator's first verdict: a pass (the pod runs) or its first failure. */
async function verdictOf(
  pod: PodObject,
  validator: string,
): Promise<{ exitCode: number; message: string; run: PodRun }> {
  const clock = new ManualClock();
  const run = start(pod, clock);
  await Promise.race([run.outcome, clock.sleepsStarted(1)]);
  const attempt = run.attempts.find((candidate) => candidate.name === validator);
  if (!attempt)
    throw new Error(`${validator} did not run: ${JSON.stringify(await Promise.race([run.outcome, 'pending']))}`);
  return { exitCode: attempt.exitCode, message: attempt.message, run };
}

// Linkerd's chart renders --connect-addr HOST:PORT on every release: the drop-in reads it exactly
// as linkerd-network-validator does once the drop-in argv fixes are merged (verified here by
// building the image with them).
const FIXTURES: ReadonlyArray<{ mesh: Mesh; file: string; validator: string; rules: string }> = [
  {
    mesh: 'linkerd',
    file: 'linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml',
    validator: 'linkerd-network-validator',
    rules: 'linkerd/cni-default/iptables-nft-save.v4.txt',
  },
  {
    mesh: 'istio',
    file: 'istio/1.29.0/hello.yaml.cni.injected',
    validator: 'istio-validation',
    rules: 'istio-cni/basic/iptables-nft-save.v4.txt',
  },
  {
    mesh: 'istio',
    file: 'istio/1.20.0/hello.yaml.cni.injected',
    validator: 'istio-validation',
    rules: 'istio-cni/basic/iptables-nft-save.v4.txt',
  },
  {
    mesh: 'istio',
    file: 'istio/1.29.0/hello-openshift-tproxy.yaml.injected',
    validator: 'istio-validation',
    rules: 'istio-cni/tproxy/iptables-nft-save.v4.txt',
  },
];

describe("the meshes' injected validators, image swapped for Interlock's", () => {
  for (const fixture of FIXTURES) {
    it(`${fixture.file}: passes where the CNI wrote ${fixture.mesh}'s rules, fails ${FAILURE[fixture.mesh]} where it did not`, async () => {
      const { pod, validator } = await injectedPod(fixture.file, fixture.validator);
      await chain(fixture.mesh, fixture.rules);
      const pass = await verdictOf(pod, fixture.validator);
      expect(pass.exitCode, pass.message).toBe(0);
      expect(await pass.run.outcome).toMatchObject({ kind: 'running' });
      await chain(fixture.mesh, undefined);
      const fail = await verdictOf((await injectedPod(fixture.file, fixture.validator)).pod, fixture.validator);
      expect(fail.exitCode, fail.message).toBe(FAILURE[fixture.mesh]);
      expect(fail.message).toMatch(/InterceptionMissing/);
      // What ran is what the injector rendered.
      expect(pod.spec.initContainers?.find((c) => c.name === fixture.validator)).toEqual(validator);
    });
  }
});

describe("the validator's memory limit", () => {
  const file = 'linkerd/stable-2.14.0/inject_emojivoto_deployment_no_init_container.golden.yml';

  it("Linkerd stable-2.14.0 injects its validator with a 20Mi limit: Interlock's drop-in passes within it", async () => {
    const { pod, validator } = await injectedPod(file, 'linkerd-network-validator');
    expect(validator.resources?.limits?.['memory']).toBe('20Mi');
    await chain('linkerd', 'linkerd/cni-default/iptables-nft-save.v4.txt');
    const run = await verdictOf(pod, 'linkerd-network-validator');
    expect(run.exitCode, run.message).toBe(0);
    expect(await run.run.outcome).toMatchObject({ kind: 'running' });
  });

  it('a limit node cannot start under (the same pod at 12Mi): the drop-in is OOM-killed (137), failing closed', async () => {
    const { pod } = await injectedPod(file, 'linkerd-network-validator');
    const starved: PodObject = {
      ...pod,
      spec: {
        ...pod.spec,
        initContainers: pod.spec.initContainers?.map((container) =>
          container.name === 'linkerd-network-validator'
            ? { ...container, resources: { ...container.resources, limits: { memory: '12Mi' } } }
            : container,
        ),
      },
    };
    await chain('linkerd', 'linkerd/cni-default/iptables-nft-save.v4.txt');
    const run = await verdictOf(starved, 'linkerd-network-validator');
    expect(run.exitCode).toBe(137);
    expect(run.run.statuses.get('linkerd-network-validator')?.lastState).toMatchObject({
      terminated: { exitCode: 137, reason: 'OOMKilled' },
    });
  });
});

describe("Interlock's own manifest for each mesh", () => {
  for (const mesh of ['linkerd', 'istio'] as const) {
    const rules =
      mesh === 'linkerd' ? 'linkerd/cni-default/iptables-nft-save.v4.txt' : 'istio-cni/basic/iptables-nft-save.v4.txt';
    it(`${mesh}: the printed init container passes on a meshed node and fails ${FAILURE[mesh]} on an unmeshed one`, async () => {
      const validator = await manifestContainer(mesh);
      await chain(mesh, rules);
      const pass = await verdictOf(podOf(`manifest-${mesh}`, { initContainers: [validator] }), validator.name);
      expect(pass.exitCode, pass.message).toBe(0);
      expect(pass.message).toMatch(/RulesNotInspected/);
      await chain(mesh, undefined);
      const fail = await verdictOf(podOf(`manifest-${mesh}`, { initContainers: [validator] }), validator.name);
      expect(fail.exitCode, fail.message).toBe(FAILURE[mesh]);
    });

    it(`${mesh} --rules-check: the CRI grants NET_ADMIN and NET_RAW as effective capabilities, and the rules are read and checked`, async () => {
      const validator = await manifestContainer(mesh, ['--rules-check']);
      const capabilities: ContainerSpec = {
        ...validator,
        name: 'capabilities',
        command: [
          'node',
          '-e',
          'require("fs").writeFileSync("/dev/termination-log", require("fs").readFileSync("/proc/self/status", "utf8"))',
        ],
        args: [],
      };
      await chain(mesh, rules);
      const identity = await verdictOf(
        podOf('caps', { initContainers: [capabilities], restartPolicy: 'Never' }),
        'capabilities',
      );
      const effective = BigInt(`0x${/^CapEff:\s+([0-9a-f]+)$/m.exec(identity.message)?.[1] ?? '0'}`);
      // NET_ADMIN is bit 12, NET_RAW bit 13; nothing else survives drop ALL.
      expect(effective).toBe((1n << 12n) | (1n << 13n));
      const pass = await verdictOf(podOf(`rules-${mesh}`, { initContainers: [validator] }), validator.name);
      expect(pass.exitCode, pass.message).toBe(0);
      expect(pass.message).toMatch(/^rules passed: /m);
      await chain(mesh, undefined);
      const fail = await verdictOf(podOf(`rules-${mesh}`, { initContainers: [validator] }), validator.name);
      expect(fail.exitCode, fail.message).toBe(FAILURE[mesh]);
    });
  }
});

describe("Istio's native sidecar ordering", () => {
  it('istio-validation runs to exit 0 before the istio-proxy sidecar starts; the app starts only once the sidecar runs', async () => {
    const { pod } = await injectedPod('istio/1.29.0/hello.yaml.cni.injected', 'istio-validation');
    expect(pod.spec.initContainers?.map((c) => [c.name, c.restartPolicy ?? 'none'])).toEqual([
      ['istio-validation', 'none'],
      ['istio-proxy', 'Always'],
    ]);
    await chain('istio', 'istio-cni/basic/iptables-nft-save.v4.txt');
    const run = start(pod);
    expect(await run.outcome).toMatchObject({ kind: 'running' });
    const validation = run.attempts.find((attempt) => attempt.name === 'istio-validation');
    const status = async (name: string) => {
      const id = run.statuses.get(name)?.containerID?.replace('containerd://', '');
      return (await node.cri.call('ContainerStatus', { container_id: id }))['status'] as Record<string, unknown>;
    };
    const proxy = await status('istio-proxy');
    const app = await status('hello');
    expect(validation?.exitCode).toBe(0);
    expect(Number(proxy['started_at'])).toBeGreaterThan(validation?.finishedAtNs ?? Infinity);
    expect(proxy['state']).toBe('CONTAINER_RUNNING');
    expect(Number(app['started_at'])).toBeGreaterThan(Number(proxy['started_at']));
  });
});
