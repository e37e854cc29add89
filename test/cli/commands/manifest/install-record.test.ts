import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { VERSION } from '../../../../src/config/version.js';

type Meta = { name: string; namespace?: string; labels?: Record<string, string> };
type Doc = { apiVersion: string; kind: string; metadata: Meta; data?: Record<string, string> };

async function printed(argv: string[], env: Record<string, string> = {}): Promise<Doc[]> {
  const outcome = await runManifest(argv, env);
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc);
}

const records = (documents: Doc[]) =>
  documents.filter((d) => d.metadata.labels?.['app.kubernetes.io/name'] === 'interlock-install');
const key = (d: Doc) => `${d.apiVersion} ${d.kind} ${d.metadata.namespace ?? '-'}/${d.metadata.name}`;
/** The record's delete list, as `kubectl delete -f -` reads it. */
const deleteList = (record: Doc) =>
  parseAllDocuments(record.data?.['objects'] ?? '')
    .map((document) => document.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);

describe('manifest: the install record', () => {
  it.each([
    [['--node-agent', '--mesh', 'linkerd'], 'interlock-install-node-agent-linkerd', 'interlock-system'],
    [['--webhook', '--namespace', 'hooks'], 'interlock-install-webhook', 'hooks'],
    [['--rbac', '--namespace', 'shop', '--service-account', 'web'], 'interlock-install-validator-events', 'shop'],
    [['--monitoring', '--node-namespace', 'agents'], 'interlock-install-monitoring', 'agents'],
  ])(
    '%j: one ConfigMap, Interlock-labelled, listing exactly every object printed, itself too',
    async (argv, name, ns) => {
      const documents = await printed(argv);
      const [record, ...more] = records(documents);
      expect(more).toEqual([]);
      expect(record).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns } });
      expect(record!.metadata.labels).toMatchObject({
        'app.kubernetes.io/part-of': 'interlock',
        'app.kubernetes.io/managed-by': 'interlock',
      });
      // Last: applied after the Namespace it lives in.
      expect(documents.at(-1)).toBe(record);
      const listed = deleteList(record!);
      expect(listed.map(key).sort()).toEqual(documents.map(key).sort());
      // Stubs only: the type and the name, nothing a stale record could put back.
      for (const stub of listed) expect(Object.keys(stub).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(record!.data?.['command']).toBe(`interlock manifest ${argv.join(' ')}`);
      expect(record!.data?.['version']).toBe(VERSION);
    },
  );

  it('lists the cluster-scoped objects without a namespace, and the objects inside a Namespace before it', async () => {
    const listed = deleteList(records(await printed(['--node-agent', '--mesh', 'istio']))[0]!);
    const kinds = listed.map((d) => d.kind);
    expect(kinds).toEqual(expect.arrayContaining(['ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy']));
    for (const cluster of listed.filter((d) => /^(Cluster|Namespace|Validating)/.test(d.kind)))
      expect(cluster.metadata, cluster.kind).not.toHaveProperty('namespace');
    expect(kinds.indexOf('DaemonSet')).toBeLessThan(kinds.indexOf('Namespace'));
  });

  it('records the flags a variable gave, and leaves the output format out (YAML or JSON, the same install)', async () => {
    const yaml = records(await printed(['--node-agent'], { INTERLOCK_MESH: 'kuma' }))[0]!;
    expect(yaml.data?.['environment']).toBe('INTERLOCK_MESH=kuma');
    expect(yaml.data?.['command']).toBe('interlock manifest --node-agent');
    const json = JSON.parse((await runManifest(['--node-agent', '-o', 'json'], { INTERLOCK_MESH: 'kuma' })).stdout) as {
      items: Doc[];
    };
    expect(records(json.items)).toEqual([yaml]);
  });

  it('prints none for the init container, which is pasted into the operator own objects', async () => {
    const outcome = await runManifest(['--mesh', 'linkerd'], {});
    expect(outcome.stdout).not.toMatch(/interlock-install/);
  });
});
