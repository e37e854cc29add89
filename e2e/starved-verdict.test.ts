import { availableParallelism } from 'node:os';
import type { StartedTestContainer } from 'testcontainers';
import { afterEach, describe, expect, it } from 'vitest';
import { baseImageOf, INTERLOCK_IMAGE, NEVER_PULL, PodContainer, StartedOnly } from './harness/containers.js';
import { host } from './harness/host.js';
import { LINKERD_VALIDATOR, runInterlock, runReport } from './harness/interlock.js';
import { Pod } from './harness/pod.js';

// Busy loops in a pod of their own, twice as many as there are cores. Each ends itself on the
// monotonic clock, so a test that is killed leaves nothing spinning.
const BUSY_LOOPS = 2 * availableParallelism();
const BUSY_FOR_MS = 40_000;
// The kubelet's cpu.shares: a BestEffort pod (no requests) gets 2, a pod requesting 1 CPU 1024.
const BEST_EFFORT_SHARES = 2;
const ONE_CPU_SHARES = 1024;

const pods: Pod[] = [];
const busyPods: StartedTestContainer[] = [];

afterEach(async () => {
  for (const busy of busyPods.splice(0)) await busy.stop({ timeout: 0 });
  for (const pod of pods.splice(0)) await pod.destroy();
});

/** A Burstable pod that keeps every core busy: what starves its BestEffort neighbours. */
async function startBusyPod(): Promise<void> {
  const loop = `const end = performance.now() + ${BUSY_FOR_MS}; while (performance.now() < end);`;
  const script = `for i in $(seq ${BUSY_LOOPS}); do node -e '${loop}' & done; wait`;
  const busy = await new PodContainer(await baseImageOf(INTERLOCK_IMAGE))
    .withPullPolicy(NEVER_PULL)
    .withNetworkMode('none')
    .withCpuShares(ONE_CPU_SHARES)
    .withEntrypoint(['sh', '-c', script])
    .withLabels({ 'io.mesh-interlock.e2e': 'busy' })
    .withWaitStrategy(new StartedOnly())
    .start();
  busyPods.push(busy);
}

/**
 * A pod with an address and a route but no mesh rules, whose network drops the probe without an
 * answer (no ICMP error, no reset): only the validator's own deadline can end its probe.
 */
async function unmeshedPodThatDropsTheProbe(): Promise<Pod> {
  const pod = await Pod.create();
  pods.push(pod);
  await pod.runPrimaryCni();
  await host('ip', ['netns', 'exec', pod.sinkNetns, 'iptables-nft', '-t', 'raw', '-I', 'PREROUTING', '-j', 'DROP']);
  return pod;
}

describe("the image's verdict under starvation (what ships, in a BestEffort pod beside a busy one)", () => {
  // The validator gets about 2/1026 of the machine while the loops run, and all of it after:
  // it must still write its verdict and exit with the mesh's failure code, however late (the
  // storm benchmark measures how late; a test does not time it).
  it('an unmeshed pod whose probe is dropped gets the termination message and exit 95, not a hang', async () => {
    const pod = await unmeshedPodThatDropsTheProbe();
    await startBusyPod();
    const result = await runInterlock(pod, {
      security: LINKERD_VALIDATOR,
      args: ['--mesh', 'linkerd', '--timeout', '4s'],
      cpuShares: BEST_EFFORT_SHARES,
    });
    expect(result.terminationMessage, runReport(result)).not.toBe('');
    expect(result.reason, runReport(result)).toMatch(/^(InterceptionMissing|ValidationTimeout)$/);
    expect(result.exitCode, runReport(result)).toBe(95);
  });
});
