import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  containerOutput,
  dockerContainer,
  INTERLOCK_IMAGE,
  NEVER_PULL,
  PodContainer,
  StartedOnly,
} from './harness/containers.js';
import { createTerminationLog, ISTIO_VALIDATION, runInterlock } from './harness/interlock.js';
import { Pod } from './harness/pod.js';
import { corpusRules } from './harness/rules.js';

/**
 * The drop-in swap, in the image: Linkerd's injected `command:` path with its flags (as its chart
 * renders them on every release, connect address included), and Istio's `args` after the image's
 * own entrypoint.
 */
const LINKERD_COMMAND = ['/usr/lib/linkerd/linkerd2-network-validator'];
const LINKERD_ARGS = [
  '--log-format',
  'json',
  '--log-level',
  'debug',
  '--connect-addr',
  '1.1.1.1:20001',
  '--listen-addr',
  '0.0.0.0:4140',
  '--timeout',
  '5s',
];
const ISTIO_ARGS = [
  'istio-iptables',
  '-p',
  '15001',
  '-z',
  '15006',
  '-u',
  '1337',
  '-m',
  'REDIRECT',
  '-i',
  '*',
  '-x',
  '',
  '-b',
  '*',
  '-d',
  '15090,15021,15020',
  '--log_output_level=default:info',
  '--run-validation',
  '--skip-rule-apply',
  '--probe-timeout',
  '5s',
];

const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.destroy();
});

async function meshedPod(rules: 'linkerd/cni-default' | 'istio-cni/basic' | undefined): Promise<Pod> {
  const pod = await Pod.create();
  pods.push(pod);
  await pod.runPrimaryCni();
  if (rules) await pod.runMeshCni(corpusRules(rules));
  return pod;
}

/** Linkerd's validator container as its injector writes it, with only the image swapped. */
async function runLinkerdCommand(pod: Pod): Promise<{ exitCode: number; terminationMessage: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'interlock-compat-'));
  const terminationLog = await createTerminationLog(dir, 'termination-log');
  const container = await new PodContainer(INTERLOCK_IMAGE)
    .withPullPolicy(NEVER_PULL)
    .withNetworkMode(`container:${pod.sandboxId}`)
    .withUser('65534:65534')
    .withDroppedCapabilities('ALL')
    .withReadOnlyRootFilesystem()
    .withSecurityOpt('no-new-privileges')
    .withBindMounts([{ source: terminationLog, target: '/dev/termination-log', mode: 'rw' }])
    .withEntrypoint(LINKERD_COMMAND)
    .withCommand(LINKERD_ARGS)
    .withWaitStrategy(new StartedOnly())
    .start();
  pod.adopt(container);
  const docker = await dockerContainer(container.getId());
  const { StatusCode: exitCode } = (await docker.wait()) as { StatusCode: number };
  await containerOutput(docker);
  const terminationMessage = await readFile(terminationLog, 'utf8');
  await rm(dir, { recursive: true, force: true });
  return { exitCode, terminationMessage };
}

describe("Linkerd's command path in the image, as uid 65534", () => {
  it("passes with Linkerd's CNI rules", async () => {
    const result = await runLinkerdCommand(await meshedPod('linkerd/cni-default'));
    expect(result.exitCode, result.terminationMessage).toBe(0);
    expect(result.terminationMessage).toMatch(/^Intercepted: .* into port 4140/);
  });

  it('exits 95 without them', async () => {
    const result = await runLinkerdCommand(await meshedPod(undefined));
    expect(result.exitCode).toBe(95);
    expect(result.terminationMessage).toMatch(/^InterceptionMissing: /);
  });
});

describe("Istio's args after the image's entrypoint, as uid 1337", () => {
  it("passes with Istio's CNI rules", async () => {
    const result = await runInterlock(await meshedPod('istio-cni/basic'), {
      security: ISTIO_VALIDATION,
      args: ISTIO_ARGS,
    });
    expect(result.exitCode, result.terminationMessage).toBe(0);
  });

  it('exits 126 without them, and 64 naming an option it does not know', async () => {
    const pod = await meshedPod(undefined);
    expect((await runInterlock(pod, { security: ISTIO_VALIDATION, args: ISTIO_ARGS })).exitCode).toBe(126);
    const unknown = await runInterlock(pod, { security: ISTIO_VALIDATION, args: [...ISTIO_ARGS, '--cleanup-only'] });
    expect(unknown.exitCode).toBe(64);
    expect(unknown.stderr).toMatch(/"--cleanup-only"/);
  });
});
