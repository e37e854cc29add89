import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { meshIdentities, meshInfrastructureNamespaces } from '../../../../src/mesh/meshes.js';
import { CERT_MANAGER_NAMESPACE } from '../../../../src/mesh/fail-closed-exemptions.js';

type Doc = { kind: string; webhooks?: Array<{ namespaceSelector: { matchExpressions: Expr[] } }> };
type Expr = { key: string; operator: string; values: string[] };
type Fact = { repository: string; commit: string; path: string; fact: string; mesh?: string; value: string };

const FACTS = JSON.parse(
  readFileSync(new URL('../../../fixtures/meshes/facts/infrastructure-namespaces.json', import.meta.url), 'utf8'),
) as Fact[];

/** The namespaces no webhook entry selects: its NotIn list. */
async function exempt(argv: string[]): Promise<string[]> {
  const outcome = await runManifest(['--webhook', ...argv], {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  const configuration = parseAllDocuments(outcome.stdout)
    .map((document) => document.toJS() as Doc)
    .find((doc) => doc.kind === 'MutatingWebhookConfiguration')!;
  const lists = configuration.webhooks!.map(
    (webhook) =>
      webhook.namespaceSelector.matchExpressions.find(
        (e) => e.key === 'kubernetes.io/metadata.name' && e.operator === 'NotIn',
      )!.values,
  );
  for (const list of lists) expect(list).toEqual(lists[0]);
  return lists[0]!;
}

/** Where the meshes and cert-manager run what a pod's start depends on. */
const infrastructure = () => [CERT_MANAGER_NAMESPACE, ...meshInfrastructureNamespaces()];

describe('manifest --webhook --failure-policy Fail leaves out what would repair it', () => {
  it("pins the CNI namespaces and cert-manager's to upstream facts (istio's to its own documented install)", () => {
    for (const fact of FACTS) expect(fact.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(FACTS.find((fact) => fact.fact === 'namespace')?.value).toBe(CERT_MANAGER_NAMESPACE);
    for (const identity of meshIdentities()) {
      const cni = 'cniInstall' in identity ? identity.cniInstall : undefined;
      if (cni === undefined) continue;
      const pinned = FACTS.find((fact) => fact.mesh === identity.name)?.value;
      // istio-cni's chart installs into its release namespace: the one its install command names.
      const documented = / -n (\S+)/.exec(cni.installCni)?.[1];
      expect(cni.namespace, identity.name).toBe(pinned ?? documented);
    }
  });

  it('with Fail: cert-manager, every mesh control plane and CNI plugin, and kube-system are not selected', async () => {
    const list = await exempt(['--failure-policy', 'Fail']);
    expect(list).toEqual(expect.arrayContaining(['kube-system', 'interlock-webhook', ...infrastructure()]));
  });

  it('with Ignore: only kube-system and its own namespace, as before (an outage blocks nothing)', async () => {
    expect(await exempt([])).toEqual(['kube-system', 'interlock-webhook']);
  });

  it('--exempt-namespaces replaces the default list, whatever the policy', async () => {
    expect(await exempt(['--failure-policy', 'Fail', '--exempt-namespaces', 'ops,cert-manager'])).toEqual([
      'kube-system',
      'interlock-webhook',
      'ops',
      'cert-manager',
    ]);
    expect(await exempt(['--exempt-namespaces', 'ops'])).toEqual(['kube-system', 'interlock-webhook', 'ops']);
  });

  it('refuses a name that is not a namespace', async () => {
    const outcome = await runManifest(['--webhook', '--exempt-namespaces', 'Bad_Name'], {});
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.stderr).toMatch(/--exempt-namespaces/);
  });
});
