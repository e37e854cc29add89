import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstallCheckResult } from '../../src/install-check/install-check-result.js';
import {
  freshNamespace,
  IMAGE,
  interlock,
  kubectl,
  linkerdDeployment,
  LINKERD_VALIDATOR,
  podsOf,
  setChain,
  STATE,
  waitFor,
} from './cluster.js';

// `interlock check --data-plane` against the real Kubernetes v1.33.13: a pod `interlock inject`
// gave the validator, started while the node's chain has no mesh plugin, is listed as blocked with
// the reason its termination message gives and the node the kubelet runs it on.
const NS = 'ilk-check-dp';
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** The shipped CLI's report: check exits 69 when a check fails, and prints it all the same. */
function check(args: readonly string[]): { exitCode: number; checks: InstallCheckResult[] } {
  const ran = spawnSync('node', [CLI, 'check', ...args, '-o', 'json'], {
    env: { ...process.env, KUBECONFIG: join(STATE, 'admin.kubeconfig') },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { exitCode: ran.status ?? -1, checks: (JSON.parse(ran.stdout) as { checks: InstallCheckResult[] }).checks };
}

beforeAll(async () => {
  setChain(undefined);
  await freshNamespace(NS);
}, 180_000);
afterAll(async () => {
  setChain(undefined);
  await kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
});

describe('interlock check --data-plane, on a real cluster', () => {
  it('lists the pod its validator blocks, with the reason and the node', async () => {
    const deployment = linkerdDeployment('web', NS, 'linkerd.io/inject: enabled');
    await kubectl(['apply', '-f', '-'], await interlock(['inject', '--mesh', 'linkerd', '--image', IMAGE], deployment));
    const pod = await waitFor(
      'the validator failed once',
      async () => {
        const [found] = await podsOf(NS, 'app=web');
        const validator = found?.status.initContainerStatuses?.find((status) => status.name === LINKERD_VALIDATOR);
        return validator && (validator.restartCount >= 1 || validator.lastState.terminated) ? found : undefined;
      },
      180_000,
    );
    const node = (await kubectl(['get', 'pod', '-n', NS, pod.metadata.name, '-o', 'jsonpath={.spec.nodeName}'])).trim();
    const { exitCode, checks } = check(['--data-plane', '--image', IMAGE]);
    expect(exitCode).toBe(69);
    const blocked = checks.find((check) => check.id === 'data-plane.blocked' && check.finding?.namespace === NS);
    expect(blocked, JSON.stringify(checks.filter((check) => check.part === 'data-plane'))).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining(`kubectl -n ${NS} delete pod `),
      finding: {
        kind: 'blocked',
        reason: 'InterceptionMissing',
        exitCode: 95,
        node,
        workload: { kind: 'deployment', name: 'web' },
      },
    });
  });
});
