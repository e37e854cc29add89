import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import { crashLoopPod, nodeObject } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import { startAgent, waitFor, type AgentProcess } from './agent-process.js';

// Debian's kubectl (scripts/ensure-kubectl.sh) reads what the agent posted through the stand-in.
let api: KubeApi;
let agent: AgentProcess;
let dir: string;
let kubeconfig: string;

// Asynchronous: the stand-in answers from this very process.
const kubectl = async (...args: string[]): Promise<string> =>
  (
    await promisify(execFile)('kubectl', args, {
      env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: dir },
      encoding: 'utf8',
      timeout: 30_000,
    })
  ).stdout;

beforeAll(async () => {
  execFileSync('bash', [new URL('../../scripts/ensure-kubectl.sh', import.meta.url).pathname], { stdio: 'ignore' });
  api = await startKubeApi();
  api.store.put('nodes', nodeObject('node-a'));
  dir = mkdtempSync(join(tmpdir(), 'interlock-kubectl-'));
  kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  api.store.put(
    'pods',
    crashLoopPod({ name: 'web-1', message: 'ConfigInvalid: --inbound-port "x": expected 1-65535' }),
  );
  api.store.put(
    'pods',
    crashLoopPod({ name: 'web-2', message: 'ProbeIdentityExcluded: uid 2102 is excluded from capture' }),
  );
  // Two recent CNI failures of Interlock's own image in the first list open the breaker (threshold 1)
  // before anything is deleted.
  const recent = { image: 'mesh-interlock:dev', finishedAt: new Date().toISOString() };
  api.store.put('pods', crashLoopPod({ name: 'web-3', ownerUid: 'o3', ...recent }));
  api.store.put('pods', crashLoopPod({ name: 'web-4', ownerUid: 'o4', ...recent }));
  agent = await startAgent(api, [
    '--breaker-threshold',
    '1',
    '--breaker-min-namespaces',
    '1',
    '--trusted-image',
    'mesh-interlock',
  ]);
  await waitFor('the Node Event', () =>
    api.store.list('events').some((event) => event.reason === 'InterlockBreakerOpen'),
  );
  await waitFor(
    'both pod Events',
    () => api.store.list('events').filter((event) => event.reason === 'InterlockBlocked').length === 2,
  );
});

afterAll(async () => {
  agent?.kill();
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl reads what the agent posted', () => {
  it('kubectl get events lists the pod and node Events', async () => {
    const out = await kubectl('get', 'events', '-A');
    expect(out).toMatch(/InterlockBlocked\s+pod\/web-1/);
    expect(out).toMatch(/InterlockBreakerOpen\s+node\/node-a/);
  });

  it('kubectl describe pod shows the Warning with the validator reason', async () => {
    const out = await kubectl('describe', 'pod', 'web-1');
    expect(out).toMatch(/Init Containers:\s+linkerd-network-validator:/);
    expect(out).toMatch(
      /Warning\s+InterlockBlocked\s+\S+\s+interlock-node\s+ConfigInvalid: recreating the pod cannot fix this/,
    );
    expect(out).not.toContain('ProbeIdentityExcluded');
  });

  it('kubectl describe node shows the breaker Event', async () => {
    const out = await kubectl('describe', 'node', 'node-a');
    expect(out).toMatch(
      /Warning\s+InterlockBreakerOpen\s+\S+\s+interlock-node\s+Stopped recreating pods on node node-a/,
    );
  });
});
