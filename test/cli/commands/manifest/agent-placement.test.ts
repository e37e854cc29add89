import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { fileURLToPath } from 'node:url';

/** What this test reads of the printed objects. */
interface Printed {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: {
    hard?: Record<string, string>;
    scopeSelector?: { matchExpressions: Array<{ scopeName: string; operator: string; values: string[] }> };
    template?: {
      spec: {
        nodeSelector?: Record<string, string>;
        tolerations?: Array<Record<string, string>>;
        imagePullSecrets?: Array<{ name: string }>;
        priorityClassName?: string;
      };
    };
  };
}

const fixture = (relative: string) => fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url));

interface Fact {
  readonly repository: string;
  readonly fact: string;
  readonly value: unknown;
}
const FACTS = JSON.parse(readFileSync(fixture('meshes/facts/node-agent-placement.json'), 'utf8')) as Fact[];
const factValue = (name: string): unknown => FACTS.find((fact) => fact.fact === name)?.value;

async function printed(argv: string[]): Promise<Printed[]> {
  const outcome = await runManifest(argv, {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Printed);
}

const podOf = (documents: Printed[], kind: string) =>
  documents.find((document) => document.kind === kind)?.spec?.template?.spec;

describe('manifest --node-agent: a mesh, and the placement a node agent needs', () => {
  it('refuses --node-agent without --mesh: a generic agent ignores every mesh pod while check calls it healthy', async () => {
    const outcome = await runManifest(['--node-agent', '--image', 'registry.example/interlock:1'], {});
    expect(outcome.exitCode).toBe(64);
    expect(outcome.stderr).toMatch(/--node-agent needs --mesh/);
    expect(outcome.stdout).toBe('');
  });

  it('still prints a generic agent when --mesh generic is said', async () => {
    const documents = await printed(['--node-agent', '--mesh', 'generic', '--image', 'registry.example/interlock:1']);
    expect(documents.some((document) => document.kind === 'DaemonSet')).toBe(true);
  });

  it("runs on Linux nodes only and tolerates every taint, as the meshes' CNI DaemonSets do", async () => {
    const pod = podOf(await printed(['--node-agent', '--mesh', 'linkerd']), 'DaemonSet');
    expect(pod?.nodeSelector).toEqual(factValue('node-selector'));
    // An operator: Exists toleration without key or effect tolerates NoSchedule, NoExecute and PreferNoSchedule.
    expect(pod?.tolerations).toContainEqual(factValue('tolerations'));
  });

  it('puts --image-pull-secret on the agent and the webhook pods; none without it', async () => {
    for (const mode of [['--node-agent', '--mesh', 'istio'], ['--webhook']]) {
      const kind = mode[0] === '--webhook' ? 'Deployment' : 'DaemonSet';
      const given = podOf(await printed([...mode, '--image-pull-secret', 'regcred,other']), kind);
      expect(given?.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'other' }]);
      expect(podOf(await printed(mode), kind)?.imagePullSecrets).toBeUndefined();
    }
    const webhook = podOf(await printed(['--webhook']), 'Deployment');
    expect(webhook?.nodeSelector).toEqual(factValue('node-selector'));
  });

  it('refuses a pull secret name that is not a Secret name', async () => {
    const outcome = await runManifest(['--node-agent', '--mesh', 'istio', '--image-pull-secret', 'Bad_Name'], {});
    expect(outcome.exitCode).toBe(64);
    expect(outcome.stderr).toMatch(/--image-pull-secret/);
  });

  it('does not take --image-pull-secret for the init container (the pod is yours)', async () => {
    const outcome = await runManifest(['--mesh', 'linkerd', '--image-pull-secret', 'regcred'], {});
    expect(outcome.exitCode).toBe(64);
  });

  it('prints a ResourceQuota scoped to system-node-critical outside kube-system, as istio-cni does', async () => {
    const documents = await printed(['--node-agent', '--mesh', 'istio', '--namespace', 'mesh-guard']);
    const pod = podOf(documents, 'DaemonSet');
    expect(pod?.priorityClassName).toBe('system-node-critical');
    const quota = documents.find((document) => document.kind === 'ResourceQuota');
    expect(quota?.metadata.namespace).toBe('mesh-guard');
    expect(quota?.spec?.scopeSelector?.matchExpressions).toEqual([
      { scopeName: 'PriorityClass', operator: 'In', values: ['system-node-critical'] },
    ]);
    expect(quota?.spec?.hard?.pods).toBe(String(factValue('resource-quota-pods')));
    // Before the DaemonSet: the API server admits the pods only once the quota exists.
    const kinds = documents.map((document) => document.kind);
    expect(kinds.indexOf('ResourceQuota')).toBeLessThan(kinds.indexOf('DaemonSet'));
  });
});
