import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { meshPods } from '../../scripts/mesh-pods.mjs';
import { removeAuthority, type Authority } from '../../test/harness/certs.js';
import { applyServingSecret, webhookAuthority } from './install.js';
import {
  freshNamespace,
  IMAGE,
  interlockObjects,
  kubectl,
  linkerdDeployment,
  LINKERD_VALIDATOR,
  podsOf,
  STATE,
  waitFor,
} from './cluster.js';

// charts/interlock with the real helm (scripts/ensure-helm.sh) against the real cluster, as
// docs/operator.md's Helm steps say: install (the webhook with its CA given, the node agent for
// Linkerd), the webhook mutating a Linkerd-injected pod, an upgrade to another image tag rolled out
// to both parts, and an uninstall that leaves no object with Interlock's labels, cluster-scoped ones
// included. No mesh plugin is chained: its rules would redirect the webhook's own probes when the
// upgrade recreates it. The app's validators fail then, and the agent repairs them; each pod the
// ReplicaSet makes is admitted anew, so every one shows what the webhook wrote.
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CHART = join(REPO, 'charts/interlock');
const RELEASE = 'interlock';
/** The release's own record lives in an existing namespace: the chart creates and owns its two. */
const RELEASE_NS = 'default';
const WEBHOOK_NS = 'interlock-webhook';
const AGENT_NS = 'interlock-system';
const APP_NS = 'ilk-helm';
const [REPOSITORY, TAG] = [IMAGE.replace(/:[^/:]*$/, ''), IMAGE.replace(/^.*:/, '')];
/** The upgrade's tag: the same image under another name, so the kubelet finds it without a registry. */
const UPGRADE_TAG = `${TAG}-helm-upgrade`;
const CTR = ['-a', join(STATE, 'containerd.sock'), '-n', 'k8s.io'];
const FIXTURE = 'linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml';

let authority: Authority;

function helm(args: readonly string[]): Promise<string> {
  const binary = execFileSync('bash', [join(REPO, 'scripts/ensure-helm.sh')], { encoding: 'utf8' }).trim();
  return new Promise((resolve, reject) =>
    execFile(
      binary,
      args,
      { env: { ...process.env, KUBECONFIG: join(STATE, 'admin.kubeconfig') }, timeout: 280_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`helm ${args.join(' ')}: ${stderr}`)) : resolve(stdout)),
    ),
  );
}

/** linkerdDeployment with the validator Linkerd's injector renders (its golden), which the webhook replaces. */
function injected(name: string): string {
  const fixture = meshPods().find(
    (c: { id: string; validator?: string }) => c.id.startsWith(`${FIXTURE}#`) && c.validator,
  );
  const validator = (
    fixture?.pod as { spec: { initContainers: Array<{ name: string }> } } | undefined
  )?.spec.initContainers.find((c) => c.name === LINKERD_VALIDATOR);
  if (!validator) throw new Error(`${FIXTURE}: no ${LINKERD_VALIDATOR}`);
  const deployment = parse(linkerdDeployment(name, APP_NS)) as {
    spec: { template: { spec: { initContainers?: unknown[] } } };
  };
  deployment.spec.template.spec.initContainers = [validator];
  return stringify(deployment);
}

/** The image of each pod's validator; undefined until the ReplicaSet made one. */
const validatorImages = async (selector: string): Promise<string[] | undefined> => {
  const images = (await podsOf(APP_NS, selector)).map(
    (pod) =>
      (pod as unknown as { spec: { initContainers: Array<{ name: string; image: string }> } }).spec.initContainers.find(
        (c) => c.name === LINKERD_VALIDATOR,
      )?.image ?? '',
  );
  return images.length > 0 ? [...new Set(images)] : undefined;
};

/** Every image the part's pods run, once its rollout is over (all pods updated and ready). */
async function rolledOut(kind: 'deployment' | 'daemonset', name: string, namespace: string): Promise<string[]> {
  await kubectl(['rollout', 'status', kind, name, '-n', namespace, '--timeout=110s']);
  // Its pods by its own selector (an agent's: its app and its mesh's instance).
  const selector = JSON.parse(
    await kubectl(['get', kind, name, '-n', namespace, '-o', 'jsonpath={.spec.selector.matchLabels}']),
  ) as Record<string, string>;
  const labels = Object.entries(selector)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
  const pods = JSON.parse(await kubectl(['get', 'pods', '-n', namespace, '-l', labels, '-o', 'json'])) as {
    items: Array<{ metadata: { deletionTimestamp?: string }; spec: { containers: Array<{ image: string }> } }>;
  };
  return [
    ...new Set(
      pods.items.filter((p) => !p.metadata.deletionTimestamp).flatMap((p) => p.spec.containers.map((c) => c.image)),
    ),
  ];
}

beforeAll(async () => {
  // A file before this one may have removed its Interlock with --wait=false: its Namespace may still be going.
  await waitFor('no Interlock object left by an earlier file', async () => (await interlockObjects()) === '', 180_000);
  authority = webhookAuthority('cluster-helm');
  execFileSync('ctr', [...CTR, 'images', 'tag', '--force', IMAGE, `${REPOSITORY}:${UPGRADE_TAG}`], { stdio: 'pipe' });
  await freshNamespace(APP_NS);
}, 300_000);
afterAll(async () => {
  await helm(['uninstall', RELEASE, '-n', RELEASE_NS, '--ignore-not-found', '--wait']).catch(() => undefined);
  await kubectl(['delete', 'namespace', APP_NS, '--wait=false']).catch(() => undefined);
  execFileSync('ctr', [...CTR, 'images', 'rm', `${REPOSITORY}:${UPGRADE_TAG}`], { stdio: 'pipe' });
  if (authority) removeAuthority(authority);
}, 300_000);

describe('charts/interlock, installed, upgraded and removed by the real helm', () => {
  it('installs the webhook and the node agent, both ready on their own image', async () => {
    await helm([
      'install',
      RELEASE,
      CHART,
      '-n',
      RELEASE_NS,
      '--set',
      `mesh=linkerd,webhook.enabled=true,nodeAgent.enabled=true`,
      '--set',
      `image.repository=${REPOSITORY},image.tag=${TAG}`,
      '--set-file',
      `webhook.caBundle=${join(authority.dir, 'ca.crt')}`,
    ]);
    // As manifest --ca-bundle: the serving certificate's Secret is the operator's, in the chart's namespace.
    await applyServingSecret(authority);
    expect(await rolledOut('deployment', 'interlock-webhook', WEBHOOK_NS)).toEqual([IMAGE]);
    expect(await rolledOut('daemonset', 'interlock-node-linkerd', AGENT_NS)).toEqual([IMAGE]);
  });

  it("the installed webhook puts Interlock in place of Linkerd's validator in a selected namespace", async () => {
    await kubectl(['apply', '-f', '-'], injected('web'));
    expect(await waitFor('the pod', async () => validatorImages('app=web'), 60_000)).toEqual([IMAGE]);
  });

  it('helm upgrade to another image tag rolls out to both parts, and the webhook writes the new image', async () => {
    await helm(['upgrade', RELEASE, CHART, '-n', RELEASE_NS, '--reuse-values', '--set', `image.tag=${UPGRADE_TAG}`]);
    const upgraded = `${REPOSITORY}:${UPGRADE_TAG}`;
    expect(await rolledOut('deployment', 'interlock-webhook', WEBHOOK_NS)).toEqual([upgraded]);
    expect(await rolledOut('daemonset', 'interlock-node-linkerd', AGENT_NS)).toEqual([upgraded]);
    await kubectl(['apply', '-f', '-'], injected('api'));
    expect(await waitFor('the pod', async () => validatorImages('app=api'), 60_000)).toEqual([upgraded]);
    expect(await helm(['history', RELEASE, '-n', RELEASE_NS, '-o', 'json'])).toMatch(/"revision":2/);
  });

  it("helm uninstall leaves no object with Interlock's labels, cluster-scoped ones included", async () => {
    // The app's namespace holds the Event RBAC of `manifest --rbac` (freshNamespace), which is not the chart's.
    await kubectl(['delete', 'namespace', APP_NS, '--wait=true', '--timeout=110s']);
    await helm(['uninstall', RELEASE, '-n', RELEASE_NS, '--wait', '--timeout=200s']);
    await waitFor('the namespaces to go', async () => (await interlockObjects()) === '', 120_000).catch(
      () => undefined,
    );
    expect(await interlockObjects()).toBe('');
    expect(await helm(['list', '-n', RELEASE_NS, '-q'])).toBe('');
  });
});
