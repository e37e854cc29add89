import { expectPasteable } from '../../../harness/fix-line.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCheck } from '../../../../src/cli/commands/check/run.js';
import type { InstallCheckResult } from '../../../../src/install-check/install-check-result.js';
import { writeKubeconfig } from '../../../harness/kube-api/kubeconfig.js';
import { startKubeApi, type KubeApi } from '../../../harness/kube-api/server.js';
import type { KubeObject } from '../../../harness/kube-api/types.js';
import { REPO_ROOT } from '../../../harness/pod-namespace.js';

/**
 * `interlock check --pre` against the API stand-in: the namespaces a real cluster starts with
 * (captured, test/fixtures/kube/data-plane/namespaces.json), then Linkerd's CNI DaemonSet and
 * linkerd-config as linkerd2's charts name them (src/install-check/mesh-cni-facts.ts), cert-manager
 * and the Prometheus Operator's APIs served or not. Each check seen failing, then passing.
 */
const captured = JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/kube/data-plane/namespaces.json'), 'utf8')) as {
  items: KubeObject[];
};

let dir: string;
const servers: KubeApi[] = [];

async function cluster(withoutGroups: string[] = []): Promise<{ api: KubeApi; kubeconfig: string }> {
  const api = await startKubeApi({ withoutGroups });
  servers.push(api);
  for (const namespace of captured.items) api.store.put('namespaces', namespace);
  return { api, kubeconfig: writeKubeconfig(join(dir, `kubeconfig-${servers.length}`), api.url) };
}

async function pre(kubeconfig: string, ...flags: string[]) {
  const outcome = await runCheck(['--pre', '-o', 'json', ...flags], { KUBECONFIG: kubeconfig });
  expect(outcome.stderr).toBe('');
  const checks = (JSON.parse(outcome.stdout) as { checks: InstallCheckResult[] }).checks;
  for (const check of checks) await expectPasteable(check.fix);
  return { exitCode: outcome.exitCode, checks };
}
const byId = (checks: readonly InstallCheckResult[], id: string) => checks.find((check) => check.id === id);

const namespace = (name: string, labels: Record<string, string> = {}) =>
  ({ metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } } }) as KubeObject;
const linkerdCni = (ready: number) =>
  ({
    metadata: {
      name: 'linkerd-cni',
      namespace: 'linkerd-cni',
      labels: { 'k8s-app': 'linkerd-cni', 'linkerd.io/cni-resource': 'true' },
    },
    spec: {
      selector: { matchLabels: { 'k8s-app': 'linkerd-cni' } },
      template: {
        metadata: { labels: { 'k8s-app': 'linkerd-cni' } },
        spec: { containers: [{ name: 'install-cni', image: 'cr.l5d.io/linkerd/cni-plugin:v1.2.0' }] },
      },
    },
    status: { desiredNumberScheduled: 1, numberReady: ready },
  }) as KubeObject;
const linkerdConfig = (cniEnabled: boolean) =>
  ({
    metadata: {
      name: 'linkerd-config',
      namespace: 'linkerd',
      labels: { 'linkerd.io/control-plane-component': 'controller', 'linkerd.io/control-plane-ns': 'linkerd' },
    },
    data: {
      'linkerd-crds-chart-version': 'linkerd-crds-1.0.0-edge',
      values: `clusterDomain: cluster.local\ncniEnabled: ${cniEnabled}\ncontrollerImage: cr.l5d.io/linkerd/controller\n`,
    },
  }) as KubeObject;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), `interlock-check-pre-${process.pid}-`));
});
afterAll(async () => {
  for (const api of servers) await api.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('interlock check --pre', () => {
  let fresh: { api: KubeApi; kubeconfig: string };
  beforeEach(async () => {
    fresh = await cluster();
  });

  it('refuses the install flags without --pre, and --data-plane with it', async () => {
    for (const argv of [['--mesh', 'linkerd'], ['--monitoring'], ['--pre', '--data-plane']]) {
      const outcome = await runCheck(argv, { KUBECONFIG: fresh.kubeconfig });
      expect(outcome.exitCode, argv.join(' ')).toBe(64);
      expect(outcome.stderr).toMatch(/^interlock check: ConfigInvalid: --/);
    }
  });

  it('Linkerd: fails without linkerd-cni, with it not ready, and outside CNI mode; passes in CNI mode', async () => {
    const { api, kubeconfig } = fresh;
    expect(byId((await pre(kubeconfig, '--mesh', 'linkerd')).checks, 'preflight.cni')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('no DaemonSet linkerd-cni'),
      fix: 'linkerd install-cni | kubectl apply -f -',
    });
    api.store.put('namespaces', namespace('linkerd-cni'));
    api.store.put('daemonsets', linkerdCni(0));
    expect(byId((await pre(kubeconfig, '--mesh', 'linkerd')).checks, 'preflight.cni')).toMatchObject({
      status: 'fail',
      fix: 'kubectl -n linkerd-cni describe daemonset linkerd-cni',
    });
    api.store.put('daemonsets', linkerdCni(1));
    api.store.put('namespaces', namespace('linkerd'));
    api.store.put('configmaps', linkerdConfig(false));
    const off = await pre(kubeconfig, '--mesh', 'linkerd');
    expect(byId(off.checks, 'preflight.cni')?.status).toBe('pass');
    expect(byId(off.checks, 'preflight.cni-mode')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('linkerd/linkerd-config says cniEnabled: false'),
      fix: 'linkerd upgrade --linkerd-cni-enabled | kubectl apply -f -',
    });
    api.store.put('configmaps', linkerdConfig(true));
    expect(byId((await pre(kubeconfig, '--mesh', 'linkerd')).checks, 'preflight.cni-mode')?.status).toBe('pass');
  });

  it('needs cert-manager or --ca-bundle', async () => {
    const bare = await cluster(['cert-manager.io']);
    expect(byId((await pre(bare.kubeconfig)).checks, 'preflight.certificates')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('interlock manifest --webhook --ca-bundle FILE'),
    });
    expect(byId((await pre(bare.kubeconfig, '--ca-bundle', 'ca.crt')).checks, 'preflight.certificates')?.status).toBe(
      'pass',
    );
    expect(byId((await pre(fresh.kubeconfig)).checks, 'preflight.certificates')?.status).toBe('pass');
  });

  it("with --monitoring, needs the Prometheus Operator's PodMonitor and PrometheusRule", async () => {
    const bare = await cluster(['monitoring.coreos.com']);
    expect(byId((await pre(bare.kubeconfig)).checks, 'preflight.monitoring')).toBeUndefined();
    expect(byId((await pre(bare.kubeconfig, '--monitoring')).checks, 'preflight.monitoring')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('podmonitors and prometheusrules'),
    });
    expect(byId((await pre(fresh.kubeconfig, '--monitoring')).checks, 'preflight.monitoring')?.status).toBe('pass');
  });

  it('refuses an agent namespace that enforces baseline or restricted', async () => {
    const { api, kubeconfig } = fresh;
    expect(byId((await pre(kubeconfig)).checks, 'preflight.pod-security')?.status).toBe('pass');
    for (const level of ['baseline', 'restricted']) {
      api.store.put('namespaces', namespace('interlock-system', { 'pod-security.kubernetes.io/enforce': level }));
      expect(byId((await pre(kubeconfig)).checks, 'preflight.pod-security')).toMatchObject({
        status: 'fail',
        fix: expect.stringMatching(
          /^kubectl label namespace interlock-system pod-security.kubernetes.io\/enforce=privileged --overwrite/,
        ),
      });
    }
    api.store.put('namespaces', namespace('interlock-system', { 'pod-security.kubernetes.io/enforce': 'privileged' }));
    expect(byId((await pre(kubeconfig)).checks, 'preflight.pod-security')?.status).toBe('pass');
  });

  it('--failure-policy Fail: the mesh, its CNI and cert-manager where they are by default are left out; elsewhere, still selected', async () => {
    const { api, kubeconfig } = fresh;
    for (const name of ['linkerd', 'linkerd-cni', 'cert-manager', 'certs'])
      api.store.put('namespaces', namespace(name));
    api.store.put('daemonsets', linkerdCni(1));
    api.store.put('configmaps', linkerdConfig(true));
    const certManager = (ns: string) => ({ metadata: { name: 'cert-manager', namespace: ns }, spec: {} }) as KubeObject;
    api.store.put('deployments', certManager('cert-manager'));
    const argv = ['--mesh', 'linkerd', '--failure-policy', 'Fail', '--image', 'registry.example/mesh-interlock:1.0'];
    const left = await pre(kubeconfig, ...argv);
    expect(byId(left.checks, 'preflight.failure-policy')).toMatchObject({
      status: 'pass',
      message: expect.stringMatching(/selects no namespace .*left out by default: cert-manager, linkerd, linkerd-cni/),
    });
    api.store.remove('deployments', 'cert-manager', 'cert-manager');
    api.store.put('deployments', certManager('certs'));
    const { exitCode, checks } = await pre(kubeconfig, ...argv);
    expect(exitCode).toBe(69);
    expect(byId(checks, 'preflight.failure-policy')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/would still select certs \(cert-manager\):/),
      fix: expect.stringMatching(
        /^interlock manifest --webhook --failure-policy Fail --exempt-namespaces cert-manager,linkerd,linkerd-cni,[a-z,-]*certs --image registry.example\/mesh-interlock:1.0 \| kubectl apply -f -$/,
      ),
    });
    expect(byId((await pre(kubeconfig, '--mesh', 'linkerd')).checks, 'preflight.failure-policy')).toBeUndefined();
  });
});
