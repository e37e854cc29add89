import { expectPasteable } from '../../../harness/fix-line.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCheck } from '../../../../src/cli/commands/check/run.js';
import type { InstallCheckResult } from '../../../../src/install-check/install-check-result.js';
import { makeAuthority, removeAuthority, type Authority } from '../../../harness/certs.js';
import { writeKubeconfig } from '../../../harness/kube-api/kubeconfig.js';
import { startKubeApi, type KubeApi } from '../../../harness/kube-api/server.js';
import type { KubeObject } from '../../../harness/kube-api/types.js';
import { INTERLOCK, shell as run } from '../../../harness/kubectl-shell.js';
import { REPO_ROOT } from '../../../harness/pod-namespace.js';

/**
 * `interlock check --data-plane` against the API stand-in serving pods and an Event captured from
 * the real cluster (test/fixtures/kube/data-plane, PROVENANCE.md): `web` and `api` blocked by their
 * validator (exit 95, InterceptionMissing), `api` injected with another image, `bare` meshed
 * without a validator and carrying a CaptureLost Event, `good` validated and running. Each check
 * is seen failing on the pod that breaks it and passing once that pod is gone.
 */
const FIXTURES = join(REPO_ROOT, 'test/fixtures/kube/data-plane');
const NS = 'pc46-dataplane';
const IMAGE = 'docker.io/library/mesh-interlock:dev';
type Pod = KubeObject & { metadata: { name: string; namespace: string; labels: Record<string, string> } };
const captured = (file: string) =>
  (JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as { items: KubeObject[] }).items;
const pods = captured('pods.json') as Pod[];
const events = captured('events-capture-lost.json');
const podOf = (app: string): Pod => structuredClone(pods.find((pod) => pod.metadata.labels['app'] === app)!);

let api: KubeApi;
let dir: string;
let ca: Authority;
const env = { kubeconfig: '', home: '' };

async function check(...flags: string[]): Promise<{ exitCode: number; results: InstallCheckResult[] }> {
  const outcome = await runCheck(['-o', 'json', ...flags], { KUBECONFIG: env.kubeconfig });
  expect(outcome.stderr).toBe('');
  const results = (JSON.parse(outcome.stdout) as { checks: InstallCheckResult[] }).checks;
  for (const result of results) await expectPasteable(result.fix);
  return { exitCode: outcome.exitCode, results };
}
const part = (results: readonly InstallCheckResult[], id: string) => results.filter((result) => result.id === id);

function load(...chosen: Pod[]): void {
  for (const pod of api.store.list('pods').filter((pod) => pod.metadata.namespace === NS))
    api.store.remove('pods', NS, pod.metadata.name);
  for (const pod of chosen) api.store.put('pods', pod);
}

beforeAll(async () => {
  execFileSync('bash', [join(REPO_ROOT, 'scripts/ensure-kubectl.sh')], { stdio: 'ignore' });
  api = await startKubeApi({ namespaceLifecycle: true });
  dir = mkdtempSync(join(tmpdir(), `interlock-check-dp-${process.pid}-`));
  env.kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  env.home = dir;
  for (const name of ['default', 'kube-system', NS]) api.store.put('namespaces', { metadata: { name } } as KubeObject);
  ca = makeAuthority(
    'check-dp',
    { commonName: 'interlock-webhook', altNames: ['DNS:interlock-webhook.interlock-webhook.svc'] },
    '90',
  );
  const applied = await run(
    env,
    `${INTERLOCK} manifest --webhook --ca-bundle "$1" --image ${IMAGE} | kubectl apply -f -`,
    [join(ca.dir, 'ca.crt')],
  );
  expect(applied.code, applied.stderr).toBe(0);
  for (const event of events) api.store.put('events', event);
});

afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
  if (ca) removeAuthority(ca);
});

beforeEach(() => load(...pods));

describe('interlock check --data-plane', () => {
  it('reads no pod without the flag', async () => {
    const { results } = await check();
    expect(results.filter((result) => result.part === 'data-plane')).toEqual([]);
  });

  it('lists the meshed pod that runs no Interlock validator, with the command that recreates it through the webhook', async () => {
    const { exitCode, results } = await check('--data-plane');
    expect(exitCode).toBe(69);
    const bare = podOf('bare');
    expect(part(results, 'data-plane.validator')).toEqual([
      expect.objectContaining({
        status: 'fail',
        message: `pod ${NS}/${bare.metadata.name} on node interlock-node is in linkerd but runs no Interlock validator: nothing proves its traffic is captured`,
        fix: expect.stringMatching(new RegExp(`^kubectl -n ${NS} rollout restart deployment/bare  # `)),
        finding: expect.objectContaining({ kind: 'unvalidated', reason: 'NoValidator', mesh: 'linkerd' }),
      }),
    ]);
  });

  it('lists each pod its validator blocks now, with the reason from its termination message and its node', async () => {
    const { results } = await check('--data-plane');
    const blocked = part(results, 'data-plane.blocked');
    expect(blocked.map((result) => result.finding?.pod).sort()).toEqual(
      [podOf('api').metadata.name, podOf('web').metadata.name].sort(),
    );
    const web = podOf('web').metadata.name;
    expect(blocked.find((result) => result.finding?.pod === web)).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(
        new RegExp(
          `^pod ${NS}/${web} on node interlock-node is blocked: linkerd-network-validator exited 95, InterceptionMissing: `,
        ),
      ),
      fix: `kubectl -n ${NS} delete pod ${web}  # once the mesh's CNI plugin runs on node interlock-node: docs/troubleshooting.md, InterceptionMissing`,
      finding: {
        kind: 'blocked',
        reason: 'InterceptionMissing',
        exitCode: 95,
        node: 'interlock-node',
        workload: { kind: 'deployment', name: 'web' },
      },
    });
  });

  it('lists the running pod with a CaptureLost Event, and forgets an Event whose pod is gone', async () => {
    const bare = podOf('bare');
    expect(part((await check('--data-plane')).results, 'data-plane.capture')).toEqual([
      expect.objectContaining({
        status: 'fail',
        message: expect.stringContaining(
          `pod ${NS}/${bare.metadata.name} on node interlock-node lost its capture after it started (CaptureLost): InterceptionMissing`,
        ),
        fix: `kubectl -n ${NS} delete pod ${bare.metadata.name}  # a new sandbox gets the mesh CNI's rules again; kubectl -n ${NS} describe pod ${bare.metadata.name} shows the Event`,
      }),
    ]);
    // The same pod name, recreated (a new uid): the Event is about the old one.
    load({ ...bare, metadata: { ...bare.metadata, uid: '00000000-0000-4000-8000-000000000000' } });
    expect(part((await check('--data-plane')).results, 'data-plane.capture')).toMatchObject([{ status: 'pass' }]);
  });

  it("lists the workload whose validator runs another image than the install's", async () => {
    expect(part((await check('--data-plane')).results, 'data-plane.images')).toEqual([
      expect.objectContaining({
        status: 'fail',
        message: expect.stringMatching(
          new RegExp(
            `^deployment ${NS}/api runs the validator docker.io/library/mesh-interlock:cl41, not the install's ${IMAGE}`,
          ),
        ),
        fix: `kubectl -n ${NS} rollout restart deployment/api`,
      }),
    ]);
  });

  it('passes every data-plane check on the validated, running pod alone', async () => {
    load(podOf('good'));
    const { results } = await check('--data-plane');
    expect(
      results.filter((result) => result.part === 'data-plane').map((result) => [result.id, result.status]),
    ).toEqual([
      ['data-plane.validator', 'pass'],
      ['data-plane.blocked', 'pass'],
      ['data-plane.capture', 'pass'],
      ['data-plane.images', 'pass'],
    ]);
  });

  it("counts the mesh's own validator as none, and replaces a pod no controller owns by itself", async () => {
    const good = podOf('good');
    const spec = good['spec'] as { initContainers: Array<{ image: string }> };
    spec.initContainers[0]!.image = 'cr.l5d.io/linkerd/proxy:edge-24.11.8';
    delete (good.metadata as { ownerReferences?: unknown }).ownerReferences;
    load(good);
    expect(part((await check('--data-plane')).results, 'data-plane.validator')).toMatchObject([
      {
        status: 'fail',
        fix: expect.stringMatching(
          new RegExp(`^kubectl -n ${NS} get pod ${good.metadata.name} -o yaml \\| kubectl replace --force -f -  # `),
        ),
      },
    ]);
  });

  it('lists 20 blocked pods one by one and counts the rest', async () => {
    const web = podOf('web');
    load(
      ...Array.from({ length: 23 }, (_, index) => ({
        ...web,
        metadata: { ...web.metadata, name: `web-${index}`, uid: `uid-${index}` },
      })),
    );
    const blocked = part((await check('--data-plane')).results, 'data-plane.blocked');
    expect(blocked).toHaveLength(21);
    expect(blocked.at(-1)?.message).toBe('and 3 more like these (-o json lists the first 20)');
  });

  it('with nothing installed (inject alone), skips without --image and checks the pods with it', async () => {
    const bare = await startKubeApi();
    try {
      for (const pod of pods) bare.store.put('pods', pod);
      const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig-bare'), bare.url);
      const skipped = await runCheck(['-o', 'json', '--data-plane'], { KUBECONFIG: kubeconfig });
      const none = (JSON.parse(skipped.stdout) as { checks: InstallCheckResult[] }).checks;
      expect(part(none, 'data-plane.pods')).toMatchObject([{ status: 'skip' }]);
      const given = await runCheck(['-o', 'json', '--data-plane', '--image', IMAGE], { KUBECONFIG: kubeconfig });
      const checks = (JSON.parse(given.stdout) as { checks: InstallCheckResult[] }).checks;
      for (const check of checks) await expectPasteable(check.fix);
      expect(part(checks, 'data-plane.blocked')).toHaveLength(2);
      expect(part(checks, 'data-plane.validator')[0]?.fix).toMatch(
        new RegExp(
          `^interlock manifest --webhook --namespace interlock-webhook --image ${IMAGE} \\| kubectl apply -f - && kubectl `,
        ),
      );
      const refused = await runCheck(['--image', IMAGE], { KUBECONFIG: kubeconfig });
      expect(refused.exitCode).toBe(64);
    } finally {
      await bare.close();
    }
  });

  it('prints the data plane as the operator reads it, through the real binary', async () => {
    const text = await run(env, `${INTERLOCK} check --data-plane`);
    expect(text.code).toBe(69);
    expect(text.stdout).toMatch(/^data plane \(meshed pods\)$/m);
    expect(text.stdout).toMatch(new RegExp(`^ {8}fix: kubectl -n ${NS} rollout restart deployment/api$`, 'm'));
  });
});
