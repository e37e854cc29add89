import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeAuthority } from '../../test/harness/certs.js';
import { freshNamespace, interlock, kubectl } from './cluster.js';
import { installAgent, installWebhook, type InstalledWebhook } from './install.js';

// The documented uninstall (docs/operator.md, section 7) on a real API server: the webhook, the
// node agent and an application namespace's Event RBAC installed as printed, then each output
// deleted as printed. Every kind the API server lists is searched, cluster-scoped ones included
// (the MutatingWebhookConfiguration, ClusterRoles, ClusterRoleBindings, admission policies), in
// every namespace. Objects another run left before this one are not this install's to remove.
const NS = 'ilk-uninstall';
const LABEL = 'app.kubernetes.io/part-of=interlock';

let webhook: InstalledWebhook | undefined;
let agent: string | undefined;

/** Every object of every kind the API server lists, in every namespace, that carries Interlock's label. */
async function labelled(): Promise<string[]> {
  const kinds = (await kubectl(['api-resources', '--verbs=list', '-o', 'name'])).split('\n').filter(Boolean);
  const list = JSON.parse(await kubectl(['get', kinds.join(','), '-A', '-l', LABEL, '-o', 'json'])) as {
    items: Array<{ kind: string; metadata: { name: string; namespace?: string } }>;
  };
  return list.items
    .map(({ kind, metadata }) => `${kind} ${metadata.namespace ? `${metadata.namespace}/` : ''}${metadata.name}`)
    .sort();
}

/** The uninstall commands docs/operator.md prints, in its order. */
function documentedUninstall(): string[] {
  const doc = readFileSync(fileURLToPath(new URL('../../docs/operator.md', import.meta.url)), 'utf8');
  const block = /\*\*Uninstall\.\*\*[^`]*```sh\n([^`]*)```/.exec(doc)?.[1] ?? '';
  return block.split('\n').filter(Boolean);
}

let before: string[];

beforeAll(async () => {
  before = await labelled();
  await kubectl(['create', 'namespace', NS]).catch(() => undefined);
}, 60_000);
afterAll(async () => {
  await kubectl(['delete', 'namespace', NS, '--wait=false', '--ignore-not-found']).catch(() => undefined);
  // After a failure midway, what is left of the install goes too (deleting again is harmless).
  for (const printed of [webhook?.printed, agent])
    if (printed)
      await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=120s', '--ignore-not-found'], printed).catch(
        () => undefined,
      );
  if (webhook) removeAuthority(webhook.authority);
}, 300_000);

describe('the documented uninstall, on a real cluster', () => {
  it("leaves no object with Interlock's labels in any namespace, cluster-scoped ones included", async () => {
    webhook = await installWebhook('cluster-uninstall');
    agent = await installAgent();
    await freshNamespace(NS); // applies `manifest --rbac --namespace NS`
    const installed = await labelled();
    expect(installed).toEqual(
      expect.arrayContaining([
        'MutatingWebhookConfiguration zz-interlock-webhook',
        'ClusterRole interlock-node-linkerd',
        'ClusterRoleBinding interlock-node-linkerd',
        'ValidatingAdmissionPolicy interlock-node-linkerd-own-node-pods',
        'DaemonSet interlock-system/interlock-node-linkerd',
        'Deployment interlock-webhook/interlock-webhook',
        'Namespace interlock-webhook',
        'Namespace interlock-system',
        `Role ${NS}/interlock-events`,
        `RoleBinding ${NS}/interlock-events`,
      ]),
    );

    // docs/operator.md, "Uninstall", in its order; no --monitoring here: the cluster has no
    // Prometheus Operator, so that part was never installed.
    expect(documentedUninstall()).toEqual([
      'interlock manifest --monitoring | kubectl delete -f -',
      'interlock manifest --webhook [--ca-bundle FILE] | kubectl delete -f -',
      'interlock manifest --node-agent [node flags] | kubectl delete -f -',
      'interlock manifest --rbac --namespace NS | kubectl delete -f -   # each namespace given --rbac',
    ]);
    await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=180s'], webhook.printed);
    await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=180s'], agent);
    const rbac = await interlock(['manifest', '--rbac', '--namespace', NS]);
    await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=60s'], rbac);

    // What this install added is gone, and nothing new is left. Objects other files left before it
    // (a namespace still terminating) are not this install's, whether they are gone yet or not.
    const ours = installed.filter((name) => !before.includes(name));
    const after = await labelled();
    expect(after.filter((name) => ours.includes(name))).toEqual([]);
    expect(after.filter((name) => !before.includes(name))).toEqual([]);
  });
});
