import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { alertRules } from '../../src/cli/commands/manifest/monitoring.js';
import { runManifest } from '../../src/cli/commands/manifest/run.js';
import { nodeConfigOf } from '../../src/cli/commands/node/config.js';
import { MESH_CONDITION } from '../../src/node-agent/node-gate.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const AUDIT = ['--cni-audit', '--cni-conf-dir', '/etc/cni/net.d', '--cni-bin-dir', '/opt/cni/bin'];
const GOLDEN = new URL('../inject/golden/manifest-node-agent-cni.yaml', import.meta.url);

async function printed(args: string[]): Promise<{ text: string; docs: Doc[] }> {
  const outcome = await runManifest(['--node-agent', '--mesh', 'linkerd', ...args], {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return { text: outcome.stdout, docs: parseAllDocuments(outcome.stdout).map((d) => d.toJS() as Doc) };
}
const kind = (docs: Doc[], name: string) => docs.find((doc) => doc.kind === name)!;

describe('manifest --node-agent with the node gate', () => {
  it('prints the gate rights only when asked: nodes get, nodes/status patch, events list and watch; --startup-taint adds nodes patch and a toleration', async () => {
    const plain = await printed(AUDIT);
    const condition = await printed([...AUDIT, '--report-condition']);
    const taint = await printed([...AUDIT, '--report-condition', '--startup-taint', 'readiness.k8s.io/mesh:NoExecute']);
    expect(kind(plain.docs, 'ClusterRole').rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ]);
    expect(kind(condition.docs, 'ClusterRole').rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
    ]);
    expect(kind(taint.docs, 'ClusterRole').rules).toContainEqual({
      apiGroups: [''],
      resources: ['nodes'],
      verbs: ['get', 'patch'],
    });
    const tolerations = (docs: Doc[]) => kind(docs, 'DaemonSet').spec.template.spec.tolerations as Doc[];
    expect(tolerations(taint.docs)).toContainEqual({ key: 'readiness.k8s.io/mesh', operator: 'Exists' });
    expect(tolerations(condition.docs)).toEqual(tolerations(plain.docs));
  });

  it('leaves the agent printed without the flags byte for byte as before (the golden test/inject/manifest.test.ts compares)', async () => {
    const outcome = await runManifest(
      ['--node-agent', '--mesh', 'istio', '--cni-audit', '--cni-bin-dir', '/opt/cni/bin,/usr/libexec/cni', '--taint'],
      {},
    );
    expect(outcome.stdout).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it.each([
    [['--report-condition'], '--report-condition needs --cni-audit'],
    [['--startup-taint', 'readiness.k8s.io/mesh'], '--startup-taint needs --cni-audit'],
  ])('refuses %j without --cni-audit, in node and in manifest, naming the flag', async (flags, message) => {
    expect(nodeConfigOf(['--node-name', 'n', ...flags], {})).toContain(message);
    const outcome = await runManifest(['--node-agent', '--mesh', 'linkerd', ...flags], {});
    expect(outcome.exitCode).toBe(64);
    expect(outcome.stderr).toContain(message);
  });

  it("refuses the breaker's own taint as the start-up taint: the agent would lift what its breaker set", () => {
    expect(
      nodeConfigOf(
        ['--node-name', 'n', '--mesh', 'istio', ...AUDIT, '--startup-taint', 'interlock.dev/cni-not-ready'],
        {},
      ),
    ).toContain("is the breaker's own taint");
  });

  it.each(['readiness.k8s.io/a:b:c', 'UPPER.example/x', 'readiness.k8s.io/mesh:NoEvict', '', 'a/b/c'])(
    'refuses the start-up taint %j',
    (taint) => {
      expect(nodeConfigOf(['--node-name', 'n', ...AUDIT, '--startup-taint', taint], {})).toMatch(/--startup-taint/);
    },
  );

  it('alerts on a failing mesh plugin and on a node not ready for the mesh', () => {
    const rules = alertRules({});
    expect(rules.find((rule) => rule.alert === 'InterlockMeshPluginFailing')?.expr).toContain(
      'interlock_node_mesh_plugin_failures_total',
    );
    expect(rules.find((rule) => rule.alert === 'InterlockNodeNotMeshReady')?.description).toContain(MESH_CONDITION);
  });
});
