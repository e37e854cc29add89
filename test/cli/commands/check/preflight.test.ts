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
    for (const argv of [
      ['--mesh', 'linkerd'],
      ['--monitoring'],
      ['--webhook'],
      ['--rules-check'],
      ['--pre', '--data-plane'],
    ]) {
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

  it('judges the pods the install prints against the namespaces it creates: the agent privileged, the webhook restricted', async () => {
    const { checks } = await pre(fresh.kubeconfig, '--mesh', 'linkerd');
    expect(byId(checks, 'preflight.pod-security.node-agent')).toMatchObject({
      status: 'pass',
      message:
        'Namespace interlock-system does not exist yet: manifest --node-agent creates it with pod-security.kubernetes.io/enforce=privileged, which admits DaemonSet interlock-system/interlock-node-linkerd, which needs privileged (pod: hostNetwork true)',
    });
    expect(byId(checks, 'preflight.pod-security.webhook')).toMatchObject({
      status: 'pass',
      message:
        'Namespace interlock-webhook does not exist yet: manifest --webhook creates it with pod-security.kubernetes.io/enforce=restricted, which admits Deployment interlock-webhook/interlock-webhook, which needs restricted',
    });
  });

  it("refuses an agent namespace that enforces baseline, restricted or a word that is no level, naming the pod's first violation", async () => {
    const { api, kubeconfig } = fresh;
    for (const [written, enforced] of [
      ['baseline', 'baseline'],
      ['restricted', 'restricted'],
      ['Privileged', 'restricted (its label says Privileged: not a level)'],
    ] as const) {
      api.store.put('namespaces', namespace('interlock-system', { 'pod-security.kubernetes.io/enforce': written }));
      const { exitCode, checks } = await pre(kubeconfig, '--mesh', 'istio');
      expect(exitCode).toBe(69);
      expect(byId(checks, 'preflight.pod-security.node-agent')).toMatchObject({
        status: 'fail',
        message: expect.stringMatching(
          new RegExp(
            `^Namespace interlock-system enforces PodSecurity ${enforced.replace(/[()]/g, '\\$&')}: it refuses DaemonSet interlock-system/interlock-node-istio, which needs privileged \\(pod: hostNetwork true\\); applying manifest --node-agent would overwrite the label with privileged`,
          ),
        ),
        fix: expect.stringMatching(
          /^kubectl label namespace interlock-system pod-security.kubernetes.io\/enforce=privileged --overwrite {2}# /,
        ),
      });
    }
    api.store.put('namespaces', namespace('interlock-system', { 'pod-security.kubernetes.io/enforce': 'privileged' }));
    expect(byId((await pre(kubeconfig)).checks, 'preflight.pod-security.node-agent')?.status).toBe('pass');
  });

  it('judges the webhook in a namespace of its own; notes enforce-version', async () => {
    const { api, kubeconfig } = fresh;
    api.store.put(
      'namespaces',
      namespace('hooks', {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'v1.25',
      }),
    );
    expect(
      byId((await pre(kubeconfig, '--webhook-namespace', 'hooks')).checks, 'preflight.pod-security.webhook'),
    ).toMatchObject({
      status: 'pass',
      message:
        'Namespace hooks (enforce restricted; enforce-version v1.25, judged by the latest checks) admits Deployment hooks/interlock-webhook, which needs restricted',
    });
  });

  it('warns when the warn or audit label of an admitting namespace would flag the pods', async () => {
    const { api, kubeconfig } = fresh;
    for (const mode of ['warn', 'audit']) {
      api.store.put(
        'namespaces',
        namespace('interlock-system', { [`pod-security.kubernetes.io/${mode}`]: 'baseline' }),
      );
      const { exitCode, checks } = await pre(kubeconfig);
      expect(byId(checks, 'preflight.pod-security.node-agent')).toMatchObject({
        status: 'warn',
        message: `Namespace interlock-system admits DaemonSet interlock-system/interlock-node-generic (enforce privileged), but its ${mode} level baseline flags it: it needs privileged (pod: hostNetwork true)`,
        fix: `kubectl label namespace interlock-system pod-security.kubernetes.io/${mode}=privileged --overwrite`,
      });
      expect(exitCode).toBe(0);
    }
  });

  it("judges Interlock's validator in every namespace the mesh meshes, by the mesh's own switch", async () => {
    const { api, kubeconfig } = fresh;
    const meshed = (
      name: string,
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> },
    ) =>
      api.store.put('namespaces', {
        metadata: {
          name,
          labels: { 'kubernetes.io/metadata.name': name, ...metadata.labels },
          annotations: metadata.annotations,
        },
      } as KubeObject);
    expect(byId((await pre(kubeconfig, '--mesh', 'linkerd')).checks, 'preflight.pod-security.meshed')).toMatchObject({
      status: 'skip',
    });
    expect(byId((await pre(kubeconfig, '--mesh', 'generic')).checks, 'preflight.pod-security.meshed')).toBeUndefined();
    const restricted = { 'pod-security.kubernetes.io/enforce': 'restricted' };
    meshed('shop', { labels: restricted, annotations: { 'linkerd.io/inject': 'enabled' } });
    meshed('off', { labels: restricted, annotations: { 'linkerd.io/inject': 'disabled' } });
    meshed('mesh', { labels: { ...restricted, 'istio-injection': 'enabled' } });
    meshed('ambient', { labels: { ...restricted, 'istio.io/dataplane-mode': 'ambient' } });
    meshed('kuma-apps', { labels: { 'kuma.io/sidecar-injection': 'enabled' } });
    const judged = (checks: readonly InstallCheckResult[]) =>
      checks
        .filter((check) => check.id === 'preflight.pod-security.meshed')
        .map((check) => [check.status, check.message]);
    expect(judged((await pre(kubeconfig, '--mesh', 'linkerd')).checks)).toEqual([
      [
        'pass',
        "Namespace shop (enforce restricted) admits linkerd's pods, to which Interlock adds init container linkerd-network-validator, which needs restricted",
      ],
    ]);
    expect(judged((await pre(kubeconfig, '--mesh', 'istio-ambient')).checks)).toEqual([
      [
        'pass',
        "Namespace ambient (enforce restricted) admits istio-ambient's pods, to which Interlock adds init container istio-ambient-validation, which needs restricted",
      ],
    ]);
    expect(judged((await pre(kubeconfig, '--mesh', 'kuma')).checks)).toEqual([
      [
        'pass',
        "Namespace kuma-apps (enforce privileged) admits kuma's pods, to which Interlock adds init container kuma-validation, which needs restricted",
      ],
    ]);
    expect(judged((await pre(kubeconfig)).checks).map(([, message]) => message?.split(' ')[1])).toEqual([
      'kuma-apps',
      'mesh',
      'shop',
    ]);
  });

  it('with --rules-check, refuses a meshed namespace below privileged, naming the capability', async () => {
    const { api, kubeconfig } = fresh;
    api.store.put('namespaces', {
      metadata: {
        name: 'shop',
        labels: { 'kubernetes.io/metadata.name': 'shop', 'pod-security.kubernetes.io/enforce': 'baseline' },
        annotations: { 'linkerd.io/inject': 'enabled' },
      },
    } as KubeObject);
    const { exitCode, checks } = await pre(kubeconfig, '--mesh', 'linkerd', '--rules-check');
    expect(exitCode).toBe(69);
    expect(byId(checks, 'preflight.pod-security.meshed')).toEqual({
      part: 'preflight',
      id: 'preflight.pod-security.meshed',
      status: 'fail',
      message:
        "Namespace shop enforces PodSecurity baseline: it refuses linkerd's pods, to which Interlock adds init container linkerd-network-validator with the rules check, which needs privileged (container linkerd-network-validator: securityContext.capabilities.add NET_ADMIN)",
      fix: 'kubectl label namespace shop pod-security.kubernetes.io/enforce=privileged --overwrite  # or drop --rules-check',
    });
    expect(byId((await pre(kubeconfig, '--mesh', 'linkerd')).checks, 'preflight.pod-security.meshed')?.status).toBe(
      'pass',
    );
  });

  it('--node-agent or --webhook alone: only that part is judged, and the webhook alone needs its certificate', async () => {
    const { api, kubeconfig } = fresh;
    api.store.put('namespaces', {
      metadata: { name: 'shop', annotations: { 'linkerd.io/inject': 'enabled' } },
    } as KubeObject);
    const ids = async (...flags: string[]) =>
      (await pre(kubeconfig, '--mesh', 'linkerd', ...flags)).checks
        .map((check) => check.id)
        .filter((id) => /pod-security|certificates|failure-policy/.test(id));
    expect(await ids('--node-agent', '--failure-policy', 'Fail')).toEqual(['preflight.pod-security.node-agent']);
    expect(await ids('--webhook')).toEqual([
      'preflight.certificates',
      'preflight.pod-security.webhook',
      'preflight.pod-security.meshed',
    ]);
    expect(await ids('--webhook', '--node-agent')).toEqual(await ids());
    expect(await ids()).toEqual([
      'preflight.certificates',
      'preflight.pod-security.node-agent',
      'preflight.pod-security.webhook',
      'preflight.pod-security.meshed',
    ]);
  });

  it('fails both parts in one namespace: the output applied last labels it, and restricted refuses the agent', async () => {
    const { checks } = await pre(fresh.kubeconfig, '--node-namespace', 'interlock', '--webhook-namespace', 'interlock');
    expect(byId(checks, 'preflight.pod-security.shared-namespace')).toMatchObject({
      status: 'fail',
      message:
        'the node agent and the webhook share Namespace interlock: manifest --node-agent labels it pod-security.kubernetes.io/enforce=privileged and manifest --webhook restricted, so the output applied last decides, and restricted refuses DaemonSet interlock/interlock-node-generic, which needs privileged (pod: hostNetwork true)',
    });
    expect(byId((await pre(fresh.kubeconfig)).checks, 'preflight.pod-security.shared-namespace')).toBeUndefined();
    const agentOnly = await pre(
      fresh.kubeconfig,
      '--node-agent',
      '--node-namespace',
      'interlock',
      '--webhook-namespace',
      'interlock',
    );
    expect(byId(agentOnly.checks, 'preflight.pod-security.shared-namespace')).toBeUndefined();
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
