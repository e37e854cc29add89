import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheck } from '../../../../src/cli/commands/check/run.js';
import type { InstallCheckResult } from '../../../../src/install-check/install-check-result.js';
import { makeAuthority, removeAuthority, type Authority } from '../../../harness/certs.js';
import { writeKubeconfig } from '../../../harness/kube-api/kubeconfig.js';
import { startKubeApi, type KubeApi } from '../../../harness/kube-api/server.js';
import type { KubeObject, Resource } from '../../../harness/kube-api/types.js';
import { INTERLOCK, shell as run } from '../../../harness/kubectl-shell.js';
import { REPO_ROOT } from '../../../harness/pod-namespace.js';
import { expectPasteable } from '../../../harness/fix-line.js';

/**
 * `interlock check` against the API stand-in: the parts installed with the real kubectl from the
 * printed manifests, the controllers' work (ready replicas, endpoints, the certificate Secret,
 * the agent's pods on each node) written as a cluster would, then broken one way at a time: each
 * check is seen passing, then failing with its fix, then passing again.
 */
let api: KubeApi;
let dir: string;
let ca: Authority;
let otherCa: Authority;
let wrongName: Authority;
const env = { kubeconfig: '', home: '' };
const shell = (script: string, args: readonly string[] = []) => run(env, script, args);
const IMAGE = 'registry.example/interlock:1.0';
const W = 'interlock-webhook';
const N = 'interlock-system';
const HOST = [
  'DNS:interlock-webhook.interlock-webhook.svc',
  'DNS:interlock-webhook.interlock-webhook.svc.cluster.local',
];
const DAY = 24 * 60 * 60 * 1000;

const b64 = (data: Buffer | string) => Buffer.from(data).toString('base64');
const put = (resource: Resource, object: Record<string, unknown>) => api.store.put(resource, object as KubeObject);

function tlsSecret(authority: Authority): Record<string, unknown> {
  return {
    metadata: { name: 'interlock-webhook-tls', namespace: W },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(authority.cert), 'tls.key': b64(authority.key) },
  };
}

/** The linkerd agent's DaemonSet, ServiceAccount and ClusterRole (one agent per mesh). */
const AGENT = 'interlock-node-linkerd';

const readyPod = (node: string, ready = true) => ({
  metadata: {
    name: `interlock-node-${node}`,
    namespace: N,
    labels: { 'app.kubernetes.io/name': 'interlock-node', 'app.kubernetes.io/instance': AGENT },
  },
  spec: { nodeName: node, containers: [{ name: 'node-agent', image: IMAGE }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

/** What the controllers and kubelets of a healthy cluster would have written by now. */
function controllersDone(): void {
  put('secrets', tlsSecret(ca));
  put('endpoints', {
    metadata: { name: 'interlock-webhook', namespace: W },
    subsets: [{ addresses: [{ ip: '10.0.0.5' }, { ip: '10.0.0.6' }], ports: [{ name: 'https', port: 8443 }] }],
  });
  const deployment = api.store.get('deployments', W, 'interlock-webhook')!;
  put('deployments', { ...deployment, status: { replicas: 2, readyReplicas: 2 } });
  for (const node of ['node-a', 'node-b']) put('nodes', { metadata: { name: node } });
  const daemonSet = api.store.get('daemonsets', N, AGENT)!;
  put('daemonsets', { ...daemonSet, status: { desiredNumberScheduled: 2, numberReady: 2 } });
  for (const node of ['node-a', 'node-b']) put('pods', readyPod(node));
}

async function checkNow(at = new Date()): Promise<{ exitCode: number; results: InstallCheckResult[]; stdout: string }> {
  const outcome = await runCheck(['-o', 'json'], { KUBECONFIG: env.kubeconfig }, () => at);
  expect(outcome.stderr).toBe('');
  return {
    exitCode: outcome.exitCode,
    results: (JSON.parse(outcome.stdout) as { checks: InstallCheckResult[] }).checks,
    stdout: outcome.stdout,
  };
}

const statusOf = (results: readonly InstallCheckResult[], id: string) => results.find((result) => result.id === id);

beforeAll(async () => {
  execFileSync('bash', [join(REPO_ROOT, 'scripts/ensure-kubectl.sh')], { stdio: 'ignore' });
  api = await startKubeApi({ namespaceLifecycle: true });
  dir = mkdtempSync(join(tmpdir(), `interlock-check-${process.pid}-`));
  env.kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  env.home = dir;
  // A real cluster lists the namespaces it starts with.
  for (const name of ['default', 'kube-system']) put('namespaces', { metadata: { name } });
  ca = makeAuthority('check', { commonName: 'interlock-webhook', altNames: HOST }, '90');
  otherCa = makeAuthority('other', { commonName: 'interlock-webhook', altNames: HOST }, '90');
  wrongName = makeAuthority('check-name', { commonName: 'interlock-webhook', altNames: ['DNS:elsewhere.svc'] }, '90');
});

afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
  for (const authority of [ca, otherCa, wrongName]) if (authority) removeAuthority(authority);
});

describe('interlock check', () => {
  it('on a fresh cluster: fails, saying nothing is installed and how to install it', async () => {
    const { exitCode, results } = await checkNow();
    expect(exitCode).toBe(69);
    expect(statusOf(results, 'cluster.reachable')?.status).toBe('pass');
    expect(statusOf(results, 'cluster.installed')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('interlock manifest --webhook'),
    });
    expect(statusOf(results, 'webhook.installed')?.status).toBe('skip');
  });

  it('after kubectl applies the printed manifests and the cluster has run them: every check passes, exit 0', async () => {
    const caFile = join(ca.dir, 'ca.crt');
    const webhook = await shell(
      `${INTERLOCK} manifest --webhook --ca-bundle "$1" --image ${IMAGE} | kubectl apply -f -`,
      [caFile],
    );
    expect(webhook.code, webhook.stderr).toBe(0);
    const agent = await shell(
      `${INTERLOCK} manifest --node-agent --mesh linkerd --image ${IMAGE} | kubectl apply -f -`,
    );
    expect(agent.code, agent.stderr).toBe(0);
    // Applied, not yet running: the Deployment has no ready replica, the Service no endpoint.
    const early = await checkNow();
    expect(early.exitCode).toBe(69);
    expect(statusOf(early.results, 'webhook.endpoints')?.status).toBe('fail');
    controllersDone();
    // The real binary, as the operator runs it.
    const text = await shell(`${INTERLOCK} check`);
    expect(text.code, text.stdout).toBe(0);
    expect(text.stdout).toMatch(/^webhook \(namespace interlock-webhook\)$/m);
    expect(text.stdout).toMatch(/^ {2}ok {4}a ready agent runs on each of the 2 nodes$/m);
    expect(text.stdout).toMatch(/^all checks passed, 0 warnings, \d+ passed, 0 skipped$/m);
    const json = await shell(`${INTERLOCK} check -o json`);
    expect(json.code).toBe(0);
    const { checks } = JSON.parse(json.stdout) as { checks: InstallCheckResult[] };
    expect(checks.map((result) => result.id).sort()).toEqual(
      [
        'cluster.reachable',
        'webhook.configuration',
        'webhook.namespaces',
        'webhook.service',
        'webhook.endpoints',
        'webhook.deployment',
        'webhook.ca-bundle',
        'webhook.certificate',
        'node-agent.namespace',
        'node-agent.daemonset',
        'node-agent.nodes',
        'node-agent.rbac',
        'node-agent.mesh',
        'versions.images',
      ].sort(),
    );
    expect(checks.filter((result) => result.status !== 'pass')).toEqual([]);
    expect(statusOf(checks, 'webhook.namespaces')?.message).toMatch(
      /selects 2 of 4 namespaces: default, interlock-system$/,
    );
  });

  /** A break, the check it must fail (or warn), and the words that say so; each undone after. */
  const BREAKS: readonly {
    readonly name: string;
    readonly id: string;
    readonly status?: 'fail' | 'warn';
    readonly message: RegExp;
    readonly break: () => () => void;
    readonly at?: Date;
  }[] = [
    {
      name: 'the Service is gone (the MutatingWebhookConfiguration calls nothing)',
      id: 'webhook.service',
      message: /Service interlock-webhook\/interlock-webhook does not exist/,
      break: replace('services', W, 'interlock-webhook', () => undefined),
    },
    {
      name: 'no ready endpoint',
      id: 'webhook.endpoints',
      message: /has no ready endpoint \(2 not ready\): pods are admitted without Interlock/,
      break: replace('endpoints', W, 'interlock-webhook', (object) => ({
        ...object,
        subsets: [{ notReadyAddresses: [{ ip: '10.0.0.5' }, { ip: '10.0.0.6' }] }],
      })),
    },
    {
      name: 'no ready replica',
      id: 'webhook.deployment',
      message: /0 of 2 replicas ready/,
      break: replace('deployments', W, 'interlock-webhook', (object) => ({ ...object, status: { replicas: 2 } })),
    },
    {
      name: 'no caBundle (cert-manager never injected it)',
      id: 'webhook.ca-bundle',
      message: /no caBundle/,
      break: replace('mutatingwebhookconfigurations', undefined, 'zz-interlock-webhook', (object) => {
        const copy = structuredClone(object) as unknown as { webhooks: { clientConfig: { caBundle?: string } }[] };
        delete copy.webhooks[0]!.clientConfig.caBundle;
        return copy as unknown as KubeObject;
      }),
    },
    {
      name: 'a serving certificate another CA signed',
      id: 'webhook.certificate',
      message: /not signed by the caBundle's CA/,
      break: replace('secrets', W, 'interlock-webhook-tls', () => tlsSecret(otherCa) as KubeObject),
    },
    {
      name: 'a serving certificate for another name',
      id: 'webhook.certificate',
      message: /does not name interlock-webhook\.interlock-webhook\.svc \(it names elsewhere\.svc\)/,
      break: replace('secrets', W, 'interlock-webhook-tls', () => tlsSecret(wrongName) as KubeObject),
    },
    {
      name: 'the certificates expired',
      id: 'webhook.certificate',
      message: /expired on \d{4}-\d\d-\d\d/,
      break: () => () => undefined,
      at: new Date(Date.now() + 100 * DAY),
    },
    {
      name: 'the certificates expire within 15 days',
      id: 'webhook.certificate',
      status: 'warn',
      message: /expires on \d{4}-\d\d-\d\d, in \d+ days/,
      break: () => () => undefined,
      at: new Date(Date.now() + 80 * DAY),
    },
    {
      name: 'the webhook selects no namespace',
      id: 'webhook.namespaces',
      status: 'warn',
      message: /selects none of the 4 namespaces/,
      break: replace('mutatingwebhookconfigurations', undefined, 'zz-interlock-webhook', (object) => {
        const copy = structuredClone(object) as unknown as { webhooks: { namespaceSelector: unknown }[] };
        copy.webhooks[0]!.namespaceSelector = { matchLabels: { 'shop.example/tier': 'none' } };
        return copy as unknown as KubeObject;
      }),
    },
    {
      name: "the agent's namespace enforces PodSecurity baseline",
      id: 'node-agent.namespace',
      message: /enforces PodSecurity baseline/,
      break: replace('namespaces', undefined, N, (object) => ({
        ...object,
        metadata: { ...object.metadata, labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } },
      })),
    },
    {
      name: 'a node without a ready agent',
      id: 'node-agent.nodes',
      message: /no ready agent on 1 of 2 nodes: node-b;/,
      break: replace('pods', N, 'interlock-node-node-b', () => readyPod('node-b', false) as KubeObject),
    },
    {
      name: 'the DaemonSet has fewer ready pods than scheduled',
      id: 'node-agent.daemonset',
      message: /1 of 2 scheduled pods ready/,
      break: replace('daemonsets', N, AGENT, (object) => ({
        ...object,
        status: { desiredNumberScheduled: 2, numberReady: 1 },
      })),
    },
    {
      name: 'the ClusterRole lost pods delete',
      id: 'node-agent.rbac',
      message: /may not delete pods, which --action=delete needs/,
      break: replace('clusterroles', undefined, AGENT, (object) => ({
        ...object,
        rules: [
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: [''], resources: ['events'], verbs: ['create'] },
        ],
      })),
    },
    {
      name: 'the agent runs another image than the webhook',
      id: 'versions.images',
      message:
        /the parts run different images: .*node agent interlock-system\/interlock-node-linkerd registry\.example\/interlock:0\.9/,
      break: replace('daemonsets', N, AGENT, (object) => {
        const copy = structuredClone(object) as unknown as {
          spec: { template: { spec: { containers: { image: string }[] } } };
        };
        copy.spec.template.spec.containers[0]!.image = 'registry.example/interlock:0.9';
        return copy as unknown as KubeObject;
      }),
    },
    {
      name: 'an older release printed the agent',
      id: 'versions.cli',
      status: 'warn',
      message: /installed from interlock 0\.0\.9; this CLI is /,
      break: replace('daemonsets', N, AGENT, (object) => ({
        ...object,
        metadata: { ...object.metadata, labels: { ...object.metadata.labels, 'app.kubernetes.io/version': '0.0.9' } },
      })),
    },
  ];

  for (const broken of BREAKS)
    it(`fails (or warns) when ${broken.name}, with a fix; passes again once repaired`, async () => {
      const undo = broken.break();
      try {
        const { exitCode, results } = await checkNow(broken.at);
        const result = statusOf(results, broken.id);
        expect(result, JSON.stringify(results, null, 1)).toMatchObject({ status: broken.status ?? 'fail' });
        expect(result!.message).toMatch(broken.message);
        expect(result!.fix).toBeTruthy();
        for (const finding of results) await expectPasteable(finding.fix);
        expect(exitCode).toBe(broken.status === 'warn' ? 0 : 69);
      } finally {
        undo();
      }
      const again = await checkNow();
      expect(again.exitCode, again.stdout).toBe(0);
    });

  it('a part it may not read (403) or that errs (500) fails, naming the request; it never passes unseen', async () => {
    api.faults.add({ method: 'GET', path: /\/clusterrolebindings$/, fault: { kind: 'status', code: 403 } });
    api.faults.add({ method: 'GET', path: /\/secrets\/interlock-webhook-tls$/, fault: { kind: 'status', code: 500 } });
    try {
      const { exitCode, results } = await checkNow();
      expect(exitCode).toBe(69);
      expect(statusOf(results, 'node-agent.rbac')).toMatchObject({
        status: 'fail',
        message: expect.stringMatching(
          /ClusterRoleBindings cannot be read: GET \S+clusterrolebindings: 403 injected 403/,
        ),
        fix: expect.stringContaining('kubectl auth can-i'),
      });
      expect(statusOf(results, 'webhook.certificate')).toMatchObject({
        status: 'fail',
        message: expect.stringMatching(/interlock-webhook-tls cannot be read: GET .*: 500 /),
      });
    } finally {
      api.faults.clear();
    }
    expect((await checkNow()).exitCode).toBe(0);
  });

  it('the cluster out of reach fails the first check, exit 69; no kubeconfig or context is exit 66', async () => {
    const closed = await startKubeApi();
    const url = closed.url;
    await closed.close();
    const unreachable = writeKubeconfig(join(dir, 'unreachable'), url);
    const outcome = await runCheck([], { KUBECONFIG: unreachable });
    expect(outcome.exitCode).toBe(69);
    expect(outcome.stdout).toMatch(/FAIL {2}cannot reach the API server http:\/\/127\.0\.0\.1:\d+ .*ECONNREFUSED/);
    const missing = await runCheck(['--kubeconfig', join(dir, 'nope')], {});
    expect(missing.exitCode).toBe(66);
    const context = await runCheck(['--context', 'nosuch'], { KUBECONFIG: env.kubeconfig });
    expect(context.exitCode).toBe(66);
    expect(context.stderr).toMatch(/"nosuch" is not defined/);
  });
});

/** Replaces (or removes, when `change` gives undefined) one object; the returned function restores it. */
function replace(
  resource: Resource,
  namespace: string | undefined,
  name: string,
  change: (object: KubeObject) => KubeObject | undefined,
): () => () => void {
  return () => {
    const original = api.store.get(resource, namespace, name)!;
    expect(original, `${resource} ${name}`).toBeDefined();
    const next = change(structuredClone(original));
    if (next === undefined) api.store.remove(resource, namespace, name);
    else api.store.put(resource, next);
    return () => {
      api.store.put(resource, original);
    };
  };
}

describe('interlock check on a fresh cluster without cert-manager', () => {
  it('the default webhook output half-applies; check says the caBundle is missing and what to do; --ca-bundle mends it', async () => {
    const bare = await startKubeApi({ namespaceLifecycle: true, withoutGroups: ['cert-manager.io'] });
    const bareEnv = { kubeconfig: writeKubeconfig(join(dir, 'bare-kubeconfig'), bare.url), home: dir };
    const checkBare = async () => {
      const outcome = await runCheck(['-o', 'json'], { KUBECONFIG: bareEnv.kubeconfig });
      return {
        exitCode: outcome.exitCode,
        results: (JSON.parse(outcome.stdout) as { checks: InstallCheckResult[] }).checks,
      };
    };
    try {
      // kubectl looks for a kind missing from OpenAPI v3 in OpenAPI v2, which the stand-in does not
      // serve; without client-side validation it reaches the mapping error a real cluster gives.
      const applied = await run(
        bareEnv,
        `${INTERLOCK} manifest --webhook --image ${IMAGE} | kubectl apply --validate=false -f -`,
      );
      expect(applied.code).not.toBe(0);
      expect(applied.stderr).toMatch(/no matches for kind "Issuer" in version "cert-manager\.io\/v1"/);
      expect(applied.stderr).toMatch(/ensure CRDs are installed first/);
      // kubectl applies the rest: the configuration is there, with nothing to verify the webhook by.
      expect(bare.store.get('mutatingwebhookconfigurations', undefined, 'zz-interlock-webhook')).toBeDefined();
      const broken = await checkBare();
      expect(broken.exitCode).toBe(69);
      expect(statusOf(broken.results, 'webhook.ca-bundle')).toMatchObject({
        status: 'fail',
        fix: expect.stringContaining('cert-manager/releases/latest/download/cert-manager.yaml'),
      });
      expect(statusOf(broken.results, 'webhook.certificate')?.message).toMatch(/interlock-webhook-tls does not exist/);
      const mended = await run(
        bareEnv,
        `${INTERLOCK} manifest --webhook --ca-bundle "$1" --image ${IMAGE} | kubectl apply -f -`,
        [join(ca.dir, 'ca.crt')],
      );
      expect(mended.code, mended.stderr).toBe(0);
      bare.store.put('secrets', tlsSecret(ca) as KubeObject);
      const fixed = await checkBare();
      expect(statusOf(fixed.results, 'webhook.ca-bundle')?.status).toBe('pass');
      expect(statusOf(fixed.results, 'webhook.certificate')?.status).toBe('pass');
    } finally {
      await bare.close();
    }
  });
});
