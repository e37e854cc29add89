import { CriNode } from '../cri/cri-node.js';
import { buildPauseImage } from '../cri/images.js';
import { Kubelet, type PodRun } from '../cri/kubelet/kubelet.js';
import type { ContainerSpec } from '../cri/kubelet/pod-spec.js';
import { MemoryPublisher } from '../cri/kubelet/publisher.js';
import { APP, bridge, conflist, manifestContainer, meshPlugin, podOf, portmap } from '../cri/scenario.js';

/** One pod's start, as the kubelet harness timed it. */
export interface PodStart {
  /** RunPodSandbox called to the app container started (ms). */
  readonly podStartMs: number;
  /** StartContainer called to the init container's exit (ms), when the pod has one. */
  readonly startToExitMs: number | undefined;
  /** The runtime's own account: the init process's start to its exit (ms). */
  readonly runtimeMs: number | undefined;
}

export type Variant = 'validator' | 'noop' | 'none';

async function onePod(kubelet: Kubelet, validator: ContainerSpec, variant: Variant): Promise<PodStart> {
  const noop: ContainerSpec = { ...validator, name: 'noop', command: ['node', '-e', '0'], args: [] };
  const init = variant === 'validator' ? [validator] : variant === 'noop' ? [noop] : [];
  const run: PodRun = kubelet.start(podOf(`bench-${variant}`, { initContainers: init, containers: [APP] }));
  try {
    const outcome = await run.outcome;
    if (outcome.kind !== 'running') throw new Error(`${variant} pod did not start: ${JSON.stringify(outcome)}`);
    const attempt = run.attempts[0];
    if (attempt && attempt.exitCode !== 0)
      throw new Error(`${variant} init exited ${attempt.exitCode}: ${attempt.message}`);
    return {
      podStartMs: (run.timings.appStartedMs ?? NaN) - (run.timings.sandboxRequestedMs ?? NaN),
      startToExitMs: attempt ? attempt.finishedAtNs / 1e6 - attempt.startCalledAtMs : undefined,
      runtimeMs: attempt ? (attempt.finishedAtNs - attempt.startedAtNs) / 1e6 : undefined,
    };
  } finally {
    await run.stop();
  }
}

/**
 * Pods on a CRI node whose CNI chain writes Linkerd's rules: with Interlock's validator (as
 * `interlock manifest` prints it), with a no-op init container from the same image (`node -e 0`,
 * same securityContext), and with no init container; interleaved, `runs` of each.
 */
export async function benchPodStart(runs: number): Promise<Record<Variant, PodStart[]>> {
  await buildPauseImage();
  const node = await CriNode.start();
  try {
    await node.writeConfig('10-primary.conflist', conflist([bridge(node, 90), portmap, meshPlugin('linkerd')]));
    await node.waitCniLoaded(/ilkcri90\b/);
    const kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new MemoryPublisher() });
    const validator = await manifestContainer('linkerd');
    const samples: Record<Variant, PodStart[]> = { validator: [], noop: [], none: [] };
    for (const variant of ['validator', 'noop', 'none'] as const) await onePod(kubelet, validator, variant); // warm-up
    for (let i = 0; i < runs; i++)
      for (const variant of ['validator', 'noop', 'none'] as const)
        samples[variant].push(await onePod(kubelet, validator, variant));
    return samples;
  } finally {
    await node.stop();
  }
}
