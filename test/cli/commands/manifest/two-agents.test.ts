import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { MESHES } from '../../../../src/mesh/meshes.js';

type Meta = { name: string; namespace?: string; labels?: Record<string, string> };
type Container = { args?: string[]; ports?: Array<{ containerPort: number }> };
type Doc = {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  data?: Record<string, string>;
  roleRef?: { name: string };
  subjects?: Array<{ name: string; namespace: string }>;
  spec?: {
    selector?: { matchLabels: Record<string, string> };
    template?: {
      metadata: { labels: Record<string, string> };
      spec: { hostNetwork?: boolean; containers: Container[] };
    };
    policyName?: string;
  };
};

async function printed(argv: string[]): Promise<Doc[]> {
  const outcome = await runManifest(argv, {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc);
}

const key = (d: Pick<Doc, 'kind' | 'metadata'>) => `${d.kind} ${d.metadata.namespace ?? '-'}/${d.metadata.name}`;
/** What the printed install record lists as `retired`, as `Kind namespace/name` keys. */
const retiredKeys = (documents: Doc[]): string[] => {
  const record = documents.find((d) => d.metadata.labels?.['app.kubernetes.io/name'] === 'interlock-install')!;
  return parseAllDocuments(record.data?.['retired'] ?? '')
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null)
    .map(key);
};
const agentOf = (documents: Doc[]) => documents.find((d) => d.kind === 'DaemonSet')!;
const hostPorts = (documents: Doc[]) =>
  agentOf(documents).spec!.template!.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/**
 * Two meshes on one cluster, one agent each (issue 46): applying the second must not take over the
 * first's objects, its DaemonSet's pods or, on the host network, its port.
 */
describe('manifest --node-agent: one agent per mesh on one cluster', () => {
  const pairs = MESHES.flatMap((a, i) => MESHES.slice(i + 1).map((b) => [a, b] as const));

  it.each(pairs)('%s and %s in one namespace share no object but the Namespace', async (a, b) => {
    const first = await printed(['--node-agent', '--mesh', a]);
    const second = await printed(['--node-agent', '--mesh', b]);
    const firstKeys = new Set(first.map(key));
    const shared = second.map(key).filter((k) => firstKeys.has(k));
    expect(shared).toEqual(['Namespace -/interlock-system']);
  });

  it.each(pairs)('%s and %s: neither DaemonSet selects the other one pods', async (a, b) => {
    const [first, second] = [
      agentOf(await printed(['--node-agent', '--mesh', a])),
      agentOf(await printed(['--node-agent', '--mesh', b])),
    ];
    expect(selects(first.spec!.selector!.matchLabels, second.spec!.template!.metadata.labels)).toBe(false);
    expect(selects(second.spec!.selector!.matchLabels, first.spec!.template!.metadata.labels)).toBe(false);
  });

  it('gives every mesh its own port on the host network, none the port of the single-agent release', async () => {
    const ports = await Promise.all(
      MESHES.map(async (mesh) => hostPorts(await printed(['--node-agent', '--mesh', mesh]))),
    );
    expect(new Set(ports.flat()).size).toBe(MESHES.length);
    expect(ports.flat()).not.toContain(9477);
  });

  it('binds each mesh ClusterRole to that mesh ServiceAccount only', async () => {
    for (const mesh of MESHES) {
      const documents = await printed(['--node-agent', '--mesh', mesh, '--namespace', `agents-${mesh}`]);
      const role = documents.find((d) => d.kind === 'ClusterRole')!;
      const binding = documents.find((d) => d.kind === 'ClusterRoleBinding')!;
      const account = documents.find((d) => d.kind === 'ServiceAccount')!;
      expect(binding.roleRef?.name).toBe(role.metadata.name);
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: account.metadata.name, namespace: `agents-${mesh}` },
      ]);
      expect(role.metadata.name).toContain(mesh);
    }
  });

  it("an upgrade's record retires the single-agent release's objects of its namespace, never its own", async () => {
    const documents = await printed(['--node-agent', '--mesh', 'istio', '--namespace', 'agents']);
    const retired = retiredKeys(documents);
    expect(retired).toEqual(
      expect.arrayContaining([
        'DaemonSet agents/interlock-node',
        'ServiceAccount agents/interlock-node',
        'ClusterRole -/interlock-node',
        'ClusterRoleBinding -/interlock-node',
        'ConfigMap agents/interlock-install-node-agent',
      ]),
    );
    const current = new Set(documents.map(key));
    expect(retired.filter((k) => current.has(k))).toEqual([]);
    expect(retired.some((k) => k.startsWith('Namespace'))).toBe(false);
  });

  it('retires exactly what the single-agent release printed (its own output, kept), the Namespace aside', async () => {
    const old = parseAllDocuments(
      readFileSync(new URL('../../../fixtures/releases/eb429c1/node-agent-linkerd.yaml', import.meta.url), 'utf8'),
    ).map((document) => document.toJS() as Doc);
    const documents = await printed(['--node-agent', '--mesh', 'linkerd', '--namespace', 'ilk-upgrade']);
    const retired = retiredKeys(documents);
    const installed = old.filter((d) => d.kind !== 'Namespace').map(key);
    expect(installed.length).toBeGreaterThan(6);
    expect([...retired].sort()).toEqual([...installed].sort());
  });
});
