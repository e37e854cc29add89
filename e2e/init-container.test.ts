import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getContainerRuntimeClient, ImageName } from 'testcontainers';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dockerContainer, INTERLOCK_IMAGE } from './harness/containers.js';
import {
  IMAGE_DEFAULTS,
  ISTIO_VALIDATION,
  LINKERD_VALIDATOR,
  runInterlock,
  runReport,
  startInterlock,
  WITH_NET_ADMIN,
  type InterlockResult,
  type SecurityContext,
} from './harness/interlock.js';
import { Pod } from './harness/pod.js';
import { corpusRules, withReplacedRule, type MeshRules } from './harness/rules.js';

interface MeshCase {
  readonly mesh: 'linkerd' | 'istio';
  readonly rules: MeshRules;
  readonly security: SecurityContext;
  readonly failureExitCode: number;
  /** The port the validator must listen on for the mesh's redirect to reach it. */
  readonly listenPort: number;
  /** How the mesh passes configuration: Linkerd-style arguments or environment variables. */
  readonly via: 'args' | 'env';
}

const LINKERD: MeshCase = {
  mesh: 'linkerd',
  rules: corpusRules('linkerd/cni-default'),
  security: LINKERD_VALIDATOR,
  failureExitCode: 95,
  listenPort: 4140,
  via: 'args',
};
const ISTIO: MeshCase = {
  mesh: 'istio',
  rules: corpusRules('istio-cni/basic'),
  security: ISTIO_VALIDATION,
  failureExitCode: 126,
  listenPort: 15006,
  via: 'env',
};

/** Short enough to keep failing cases quick, long enough for a loaded 2-core machine. */
const FAILING_TIMEOUT = '2s';
const PASSING_TIMEOUT = '10s';

function configure(mesh: MeshCase, timeout: string, extraArgs: readonly string[] = []) {
  if (mesh.via === 'env') {
    return { env: { INTERLOCK_MESH: mesh.mesh, INTERLOCK_TIMEOUT: timeout }, args: [...extraArgs] };
  }
  return { args: ['--mesh', mesh.mesh, '--timeout', timeout, ...extraArgs] };
}

function summaryOf(result: InterlockResult) {
  return result.logs.at(-1);
}

/** What every run must leave, passing or failing: JSON logs ending in a verdict summary. */
function expectWellFormedLogs(result: InterlockResult): void {
  expect(result.unparsed, runReport(result)).toEqual([]);
  // Logs go to stdout only; anything on stderr is a crash or a warning nobody asked for.
  expect(result.stderr, runReport(result)).toBe('');
  expect(result.logs.length, runReport(result)).toBeGreaterThan(0);
  expect(summaryOf(result), runReport(result)).toHaveProperty('verdict');
}

function expectPass(result: InterlockResult): void {
  expect(result.exitCode, runReport(result)).toBe(0);
  expectWellFormedLogs(result);
  expect(summaryOf(result)?.['verdict'], runReport(result)).toBe('pass');
}

/** A failure as an operator sees it: the mesh's exit code, a reason, evidence, a failed verdict. */
function expectFailure(result: InterlockResult, exitCode: number, reason: string): void {
  expect(result.exitCode, runReport(result)).toBe(exitCode);
  expect(result.reason, runReport(result)).toBe(reason);
  const lines = result.terminationMessage.trim().split('\n');
  expect(lines.length, `evidence lines after the reason:\n${result.terminationMessage}`).toBeGreaterThan(1);
  expectWellFormedLogs(result);
  expect(summaryOf(result)?.['verdict'], runReport(result)).not.toBe('pass');
}

describe(`${INTERLOCK_IMAGE} as the init container of a meshed pod`, () => {
  const pods: Pod[] = [];
  async function newPod(): Promise<Pod> {
    const pod = await Pod.create();
    pods.push(pod);
    return pod;
  }

  beforeAll(async () => {
    const client = await getContainerRuntimeClient();
    await expect(
      client.image.exists(ImageName.fromString(INTERLOCK_IMAGE)),
      `${INTERLOCK_IMAGE} is not built: run IMAGE=${INTERLOCK_IMAGE} npm run image -- --base local`,
    ).resolves.toBe(true);
  });

  afterEach(async () => {
    for (const pod of pods.splice(0)) await pod.destroy();
  });

  describe('the image', () => {
    it('defaults to a non-root user and `interlock validate`, with OCI labels', async () => {
      const client = await getContainerRuntimeClient();
      const { Config } = await client.image.inspect(ImageName.fromString(INTERLOCK_IMAGE));
      const version = (
        JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
      ).version;

      expect(Config.User).toMatch(/^[1-9]\d*(:\d+)?$/);
      expect(Config.Entrypoint).toEqual(['interlock', 'validate']);
      expect(Config.Labels).toMatchObject({
        'org.opencontainers.image.version': version,
        'org.opencontainers.image.licenses': 'Apache-2.0',
      });
      expect(Config.Labels?.['org.opencontainers.image.source']).toMatch(/^https:\/\//);
    });

    it('`interlock version` in the image names the commit its labels name, stamped at build', async () => {
      const client = await getContainerRuntimeClient();
      const { Config } = await client.image.inspect(ImageName.fromString(INTERLOCK_IMAGE));
      const printed = execFileSync(
        'docker',
        [
          'run',
          '--rm',
          '--network',
          'none',
          '--entrypoint',
          'interlock',
          INTERLOCK_IMAGE,
          'version',
          '--output',
          'json',
        ],
        { encoding: 'utf8' },
      );
      const info = JSON.parse(printed) as { version: string; commit: string; buildDate: string; node: string };
      expect(info.version).toBe(Config.Labels?.['org.opencontainers.image.version']);
      expect(info.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(info.commit.startsWith(Config.Labels?.['org.opencontainers.image.revision'] ?? '-')).toBe(true);
      expect(info.buildDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(info.node).toMatch(/^v20\./);
    });

    it('passes in a meshed pod as it comes: default user, no capabilities, read-only root', async () => {
      const pod = await newPod();
      await pod.runPrimaryCni();
      await pod.runMeshCni(LINKERD.rules);

      const result = await runInterlock(pod, { security: IMAGE_DEFAULTS, ...configure(LINKERD, PASSING_TIMEOUT) });

      expectPass(result);
    });
  });

  // Both meshes' nft rules, the mesh CNI missing, and rules landing late while the validator
  // probes run on the kubelet's path in e2e/cri/; here only what that suite does not cover.
  describe('1. both CNIs ran, the mesh writing iptables-legacy', () => {
    it.each([
      { name: 'Linkerd rules (iptables-legacy)', mesh: LINKERD, rules: corpusRules('linkerd/cni-default', 'legacy') },
    ])('$name: exit 0', async ({ mesh, rules }) => {
      const pod = await newPod();
      await pod.runPrimaryCni();
      await pod.runMeshCni(rules);

      const result = await runInterlock(pod, { security: mesh.security, ...configure(mesh, PASSING_TIMEOUT) });

      expectPass(result);
    });
  });

  describe('2. the primary CNI never ran', () => {
    it.each([LINKERD, ISTIO])('$mesh: PodNetworkMissing with the mesh failure code', async (mesh) => {
      const pod = await newPod();

      const result = await runInterlock(pod, { security: mesh.security, ...configure(mesh, FAILING_TIMEOUT) });

      expectFailure(result, mesh.failureExitCode, 'PodNetworkMissing');
    });
  });

  describe('4. the mesh CNI ran late', () => {
    it('after the timeout: failure, and the restart once the rules exist passes', async () => {
      const pod = await newPod();
      await pod.runPrimaryCni();

      const early = await runInterlock(pod, { security: LINKERD.security, ...configure(LINKERD, '1500ms') });
      await pod.runMeshCni(LINKERD.rules);
      const restarted = await runInterlock(pod, { security: LINKERD.security, ...configure(LINKERD, PASSING_TIMEOUT) });

      expectFailure(early, LINKERD.failureExitCode, 'InterceptionMissing');
      expectPass(restarted);
    });
  });

  describe('5. the same image with NET_ADMIN and NET_RAW', () => {
    it('names the broken rule of a ruleset that redirects to the wrong port', async () => {
      const pod = await newPod();
      await pod.runPrimaryCni();
      await pod.runMeshCni(withReplacedRule(LINKERD.rules, '--to-ports 4140', '--to-ports 4141'));

      const result = await runInterlock(pod, { security: WITH_NET_ADMIN, ...configure(LINKERD, FAILING_TIMEOUT) });

      expectFailure(result, LINKERD.failureExitCode, 'RulesMismatch');
      // The first line is the reason's headline; the second names the rule at fault.
      const sentence = result.terminationMessage.split('\n')[1];
      expect(sentence).toContain('PROXY_INIT_OUTPUT');
      expect(sentence).toContain('REDIRECT --to-ports 4141');
      // Linkerd names each of its rules in a comment; that name is what an operator searches for.
      expect(sentence).toContain('proxy-init/redirect-all-outgoing-to-proxy-port');
    });

    it('accepts the correct ruleset', async () => {
      const pod = await newPod();
      await pod.runPrimaryCni();
      await pod.runMeshCni(LINKERD.rules);

      const result = await runInterlock(pod, { security: WITH_NET_ADMIN, ...configure(LINKERD, PASSING_TIMEOUT) });

      expectPass(result);
      // The pass must come from the rules engine agreeing, not from its having been skipped.
      expect(summaryOf(result)?.['checks'], runReport(result)).toContainEqual(
        expect.objectContaining({ name: 'rules', status: 'passed' }),
      );
    });
  });

  describe('the pod is deleted while the validator waits for the mesh CNI', () => {
    it('SIGTERM ends the run with the failure code and a termination message, never a pass', async () => {
      const pod = await newPod();
      await pod.runPrimaryCni();
      const running = await startInterlock(pod, { security: LINKERD.security, ...configure(LINKERD, '60s') });
      expect(await pod.waitForListener(LINKERD.listenPort), 'the validator never listened on the outbound port').toBe(
        true,
      );

      await (await dockerContainer(running.container.getId())).kill({ signal: 'SIGTERM' });
      const result = await running.result();

      // Like Linkerd's own validator: a signal before a verdict is a failure, 95.
      expect(result.exitCode, runReport(result)).toBe(95);
      expect(result.reason, runReport(result)).toBe('Interrupted');
      expectWellFormedLogs(result);
      expect(summaryOf(result)?.['verdict'], runReport(result)).not.toBe('pass');
    });
  });

  describe('6. CrashLoopBackOff: the failed init container restarted in the same unmeshed sandbox', () => {
    it('fails again with the same reason and exit code', async () => {
      const pod = await newPod();
      await pod.runPrimaryCni();

      const first = await runInterlock(pod, { security: LINKERD.security, ...configure(LINKERD, FAILING_TIMEOUT) });
      const restart = await runInterlock(pod, { security: LINKERD.security, ...configure(LINKERD, FAILING_TIMEOUT) });

      expect(restart.containerId).not.toBe(first.containerId);
      expectFailure(first, LINKERD.failureExitCode, 'InterceptionMissing');
      expectFailure(restart, first.exitCode, first.reason ?? 'a reason');
      expect(await pod.natRules()).not.toContain('PROXY_INIT');
    });
  });
});
