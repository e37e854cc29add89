import type Dockerode from 'dockerode';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getContainerRuntimeClient } from 'testcontainers';
import { baseImageOf, containerOutput, INTERLOCK_IMAGE } from '../harness/containers.js';
import { withDeadline } from '../harness/host.js';
import { createTerminationLog, parseLogLines } from '../harness/interlock.js';
import { Pod } from '../harness/pod.js';
import { corpusRules } from '../harness/rules.js';

export interface Sample {
  /** From the `docker start` call to the container's exit as `docker wait` reports it. */
  readonly startToExitMs: number;
  readonly exitCode: number;
  /** The validator's own account of its run (summary `durationMs`), when it gave one. */
  readonly validatorMs: number | undefined;
}

export interface BenchResult {
  readonly image: string;
  readonly baseImage: string;
  readonly interlock: readonly Sample[];
  readonly baseline: readonly Sample[];
}

const WAIT_DEADLINE_MS = 60_000;

/**
 * Case 1 of the e2e suite (Linkerd rules applied by the "mesh CNI"), timed the way a node runs an
 * init container: the container is created first, and the clock runs from `docker start` to its
 * exit. The baseline is a container running `true` from the same base with the same pod network
 * and security settings, so the difference is what Interlock itself costs.
 */
export async function benchStartToExit(runs: number): Promise<BenchResult> {
  const client = await getContainerRuntimeClient();
  const baseImage = await baseImageOf(INTERLOCK_IMAGE);
  const pod = await Pod.create();
  const dir = await mkdtemp(path.join(tmpdir(), 'interlock-bench-'));
  try {
    await pod.runPrimaryCni();
    await pod.runMeshCni(corpusRules('linkerd/cni-default'));

    const hostConfig = async (name: string): Promise<Dockerode.HostConfig> => {
      const terminationLog = await createTerminationLog(dir, name);
      return {
        NetworkMode: `container:${pod.sandboxId}`,
        CapDrop: ['ALL'],
        ReadonlyRootfs: true,
        SecurityOpt: ['no-new-privileges'],
        Binds: [`${terminationLog}:/dev/termination-log:rw`],
      };
    };

    const once = async (kind: 'interlock' | 'baseline', index: number): Promise<Sample> => {
      const container = await client.container.create({
        Image: kind === 'interlock' ? INTERLOCK_IMAGE : baseImage,
        User: '65534:65534',
        Labels: { 'io.mesh-interlock.bench': kind },
        ...(kind === 'interlock'
          ? { Cmd: ['--mesh', 'linkerd', '--timeout', '10s'] }
          : { Entrypoint: ['true'], Cmd: [] }),
        HostConfig: await hostConfig(`${kind}-${index}`),
      });
      try {
        const started = process.hrtime.bigint();
        await client.container.start(container);
        const waited = (await withDeadline(container.wait(), WAIT_DEADLINE_MS, `the ${kind} container's exit`)) as {
          StatusCode: number;
        };
        const startToExitMs = Number(process.hrtime.bigint() - started) / 1e6;
        let validatorMs: number | undefined;
        if (kind === 'interlock') {
          const durationMs = parseLogLines((await containerOutput(container)).stdout).logs.at(-1)?.['durationMs'];
          validatorMs = typeof durationMs === 'number' ? durationMs : undefined;
        }
        return { startToExitMs, exitCode: waited.StatusCode, validatorMs };
      } finally {
        await container.remove({ force: true });
      }
    };

    // One unmeasured run of each warms the page cache and the engine; then the two kinds
    // alternate so that drift in machine load hits both alike.
    await once('interlock', -1);
    await once('baseline', -1);
    const interlock: Sample[] = [];
    const baseline: Sample[] = [];
    for (let i = 0; i < runs; i += 1) {
      interlock.push(await once('interlock', i));
      baseline.push(await once('baseline', i));
    }
    return { image: INTERLOCK_IMAGE, baseImage, interlock, baseline };
  } finally {
    await pod.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}
