import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeAgentMetricsPort, retiredAgentObjects } from '../../src/node-agent/manifest.js';
import { IMAGE, interlock, kubectl, waitFor } from './cluster.js';

// The upgrade docs/operator.md describes from the release that ran one agent per namespace
// (issue 46): that release's own printed output applied first, then today's, side by side, then
// the new record's `retired` list deleted as the docs say. Its image is today's: the old release's
// image is not kept, and what the upgrade changes is the objects, their names and ports.
const NAMESPACE = 'ilk-upgrade';
const OLD_PORT = 9477;
const NODE_IP = '10.231.0.2';
const OLD = readFileSync(
  new URL('../../test/fixtures/releases/eb429c1/node-agent-linkerd.yaml', import.meta.url),
  'utf8',
);

const readyz = async (port: number): Promise<number> =>
  (await fetch(`http://${NODE_IP}:${port}/readyz`, { signal: AbortSignal.timeout(5000) })).status;

const recordData = (name: string, key: string): Promise<string> =>
  kubectl([...['get', 'configmap', name, '-n', NAMESPACE, '--ignore-not-found'], ...['-o', `jsonpath={.data.${key}}`]]);

afterAll(async () => {
  const current = await recordData('interlock-install-node-agent-linkerd', 'objects').catch(() => '');
  if (current.trim() !== '') await kubectl(['delete', '--ignore-not-found', '-f', '-'], current).catch(() => '');
  const retired = retiredAgentObjects(NAMESPACE).map((object) => JSON.stringify(object));
  await kubectl(['delete', '--ignore-not-found', '-f', '-'], retired.join('\n---\n')).catch(() => '');
  await kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=false']).catch(() => '');
}, 300_000);

describe("an upgrade from the single-agent release, as docs/operator.md's Upgrade says", () => {
  it('the new agent starts beside the old one on its own port; the record retires the old, nothing else', async () => {
    await kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    expect(OLD).toContain(`--listen=0.0.0.0:${OLD_PORT}`);
    await kubectl(['apply', '-f', '-'], OLD.replaceAll('image: mesh-interlock:dev', `image: ${IMAGE}`));
    await kubectl(['rollout', 'status', 'daemonset/interlock-node', '-n', NAMESPACE, '--timeout=180s']);
    await waitFor('the old agent to answer', async () => (await readyz(OLD_PORT)) === 200, 60_000);

    // The old record keeps the command with its --image (that release did): the same flags, the new image.
    const flags = await recordData('interlock-install-node-agent', 'command');
    expect(flags).toBe(
      'interlock manifest --node-agent --mesh linkerd --namespace ilk-upgrade --image mesh-interlock:dev',
    );
    const words = flags.split(' ').slice(1);
    const kept = words.filter((word, index) => word !== '--image' && words[index - 1] !== '--image');
    const printed = await interlock([...kept, '--image', IMAGE]);
    await kubectl(['apply', '-f', '-'], printed);
    await kubectl(['rollout', 'status', 'daemonset/interlock-node-linkerd', '-n', NAMESPACE, '--timeout=180s']);
    const newPort = nodeAgentMetricsPort('linkerd');
    await waitFor('the new agent to answer', async () => (await readyz(newPort)) === 200, 60_000);
    expect(await readyz(OLD_PORT)).toBe(200);

    const retired = await recordData('interlock-install-node-agent-linkerd', 'retired');
    const deleted = await kubectl(['delete', '--ignore-not-found', '--wait=true', '-f', '-'], retired);
    expect(deleted).toMatch(/daemonset.apps "interlock-node" deleted/);
    expect(deleted).toMatch(/clusterrolebinding.rbac.authorization.k8s.io "interlock-node" deleted/);
    expect(deleted).not.toContain('interlock-node-linkerd');
    for (const object of retiredAgentObjects(NAMESPACE)) {
      const { kind, metadata } = object as { kind: string; metadata: { name: string; namespace?: string } };
      const left = await kubectl([
        ...['get', kind, metadata.name, '--ignore-not-found', '-o', 'name'],
        ...(metadata.namespace ? ['-n', metadata.namespace] : []),
      ]);
      expect(left, `${kind} ${metadata.name}`).toBe('');
    }
    await waitFor(
      'the old port to close',
      () =>
        readyz(OLD_PORT).then(
          () => false,
          () => true,
        ),
      90_000,
    );
    await kubectl(['get', 'namespace', NAMESPACE]);
    await kubectl(['rollout', 'status', 'daemonset/interlock-node-linkerd', '-n', NAMESPACE, '--timeout=60s']);
    expect(await readyz(newPort)).toBe(200);
    const may = await kubectl([
      ...['auth', 'can-i', 'watch', 'pods', '--all-namespaces'],
      `--as=system:serviceaccount:${NAMESPACE}:interlock-node-linkerd`,
    ]);
    expect(may.trim()).toBe('yes');
  }, 600_000);
});
