import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { multusApiReader } from '../../src/cli/commands/node/cni-audit.js';
import type { CniVerdict } from '../../src/cni/audit-cni.js';
import { runCniAudit } from '../../src/cni/run-cni-audit.js';
import type { ClusterAccess } from '../../src/kube/cluster-access.js';
import { discoverCluster } from '../../src/kube/discover-cluster.js';
import { IMAGE, STATE, STAND_IN, freshNamespace, interlock, kubectl, waitFor } from './cluster.js';

/**
 * The node agent's Multus audit against the real API server: the NetworkAttachmentDefinition CRD
 * of network-attachment-definition-client v1.7.6, Istio 1.30.3's rendered definition, pods bound
 * to the node carrying the annotation values Istio's injector goldens carry, and the agent's reads
 * made with a ServiceAccount token holding exactly the ClusterRole `manifest --node-agent
 * --cni-audit --cni-multus-conf-dir` prints (test/fixtures/cni/nad/sources.json). The CRD is left
 * in place (others may use it); the namespace, the ClusterRole and its binding are removed.
 */
const NS = 'ilk-nad';
const ROLE = 'ilk-nad-agent';
const FIXTURES = (path: string) => fileURLToPath(new URL(`../../test/fixtures/${path}`, import.meta.url));
const STANDIN = FIXTURES('cni/mesh-cni-standin.mjs');
const layout = (path: string) => readFile(FIXTURES(`cni/layouts/${path}`), 'utf8');
const ISTIO_STATUS = 'sidecar.istio.io/status';
/** Multus answers VERSION with libcni's version.All: its upstream thin file sets no cniVersion (0.1.0). */
const MULTUS =
  '#!/bin/sh\necho \'{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0"]}\'\n';

let root = '';
let node = '';
let agent: ClusterAccess | undefined;

async function tokenAccess(): Promise<ClusterAccess> {
  const admin = discoverCluster({ KUBECONFIG: join(STATE, 'admin.kubeconfig') });
  if (!admin.ok) throw new Error(admin.error.message);
  const token = (await kubectl(['create', 'token', 'agent', '-n', NS, '--duration=1h'])).trim();
  const { clientCertData: _cert, clientKeyData: _key, ...rest } = admin.value;
  return { ...rest, token, origin: `token of ${NS}/agent` };
}

/** The agent's ClusterRole as the manifest prints it with Multus's directory named, bound to our account. */
async function grantAgentRole(multus: boolean): Promise<void> {
  const argv = ['manifest', '--node-agent', '--mesh', 'istio', '--cni-audit'];
  const printed = await interlock(multus ? [...argv, '--cni-multus-conf-dir', '/etc/cni/multus/net.d'] : argv);
  const role = parseAllDocuments(printed)
    .map((doc) => doc.toJS() as { kind: string; rules: unknown[] })
    .find((object) => object.kind === 'ClusterRole');
  const documents = [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: ROLE }, rules: role?.rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: ROLE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ROLE },
      subjects: [{ kind: 'ServiceAccount', name: 'agent', namespace: NS }],
    },
  ];
  await kubectl(['apply', '-f', '-'], documents.map((doc) => JSON.stringify(doc)).join('\n---\n'));
}

async function applyDefinition(name: string, config?: string): Promise<void> {
  const rendered = parse(await readFile(FIXTURES('cni/nad/istio-cni-nad.yaml'), 'utf8')) as {
    metadata: Record<string, unknown>;
  };
  const object = {
    ...rendered,
    metadata: { ...rendered.metadata, name, namespace: NS },
    ...(config === undefined ? {} : { spec: { config } }),
  };
  await kubectl(['apply', '-f', '-'], JSON.stringify(object));
}

/** A pod bound to the node, meshed as Istio's injector leaves it (its status annotation). */
async function meshedPod(name: string, networks: string | undefined): Promise<void> {
  const annotations: Record<string, string> = { [ISTIO_STATUS]: '{"containers":["istio-proxy"]}' };
  if (networks !== undefined) annotations['k8s.v1.cni.cncf.io/networks'] = networks;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, annotations },
    spec: {
      nodeName: node,
      containers: [{ name: 'istio-proxy', image: IMAGE, imagePullPolicy: 'Never', command: STAND_IN }],
    },
  };
  await kubectl(['apply', '-f', '-'], JSON.stringify(pod));
}

async function nodeDirs(conf: Record<string, string>, multus: Record<string, string>) {
  root ||= await mkdtemp(join(tmpdir(), 'interlock-nad-'));
  const base = await mkdtemp(join(root, 'node-'));
  const dirs = { confDir: join(base, 'net.d'), multusConfDir: join(base, 'multus'), binDir: join(base, 'bin') };
  for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(conf)) await writeFile(join(dirs.confDir, name), text);
  for (const [name, text] of Object.entries(multus)) await writeFile(join(dirs.multusConfDir, name), text);
  for (const type of ['calico', 'calico-ipam', 'portmap', 'bandwidth', 'multus-shim', 'istio-cni', 'linkerd-cni'])
    await copyFile(STANDIN, join(dirs.binDir, type));
  await writeFile(join(dirs.binDir, 'multus'), MULTUS, { mode: 0o755 });
  return dirs;
}

async function audit(
  conf: Record<string, string>,
  multus: Record<string, string>,
  meshPlugin: string,
): Promise<CniVerdict> {
  const { confDir, multusConfDir, binDir } = await nodeDirs(conf, multus);
  if (!agent) throw new Error('no agent access');
  const verdict = await runCniAudit({
    confDir,
    multusConfDir,
    binDirs: [binDir],
    runtime: 'containerd',
    meshPlugin,
    multusApi: multusApiReader(agent, node),
  });
  if (!verdict.ok) throw new Error(verdict.error.message);
  return verdict.value;
}

/** Only what this test's namespace causes: other tests' pods share the node. */
const ours = (verdict: CniVerdict) =>
  verdict.findings
    .filter((finding) => !finding.code.startsWith('Pod') || finding.message.includes(`pod ${NS}/`))
    .filter((finding) => finding.code !== 'AttachmentUnread' || finding.message.includes(`${NS}/`));
const codes = (verdict: CniVerdict) => ours(verdict).map((finding) => `${finding.severity}:${finding.code}`);

beforeAll(async () => {
  node = (await kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
  await kubectl(['apply', '-f', FIXTURES('cni/nad/networks-crd.yaml')]);
  await kubectl([
    'wait',
    '--for=condition=Established',
    'crd/network-attachment-definitions.k8s.cni.cncf.io',
    '--timeout=60s',
  ]);
  await freshNamespace(NS);
  await kubectl(['create', 'serviceaccount', 'agent', '-n', NS]);
  await grantAgentRole(true);
  agent = await tokenAccess();
});

afterAll(async () => {
  await kubectl(['delete', 'clusterrolebinding,clusterrole', ROLE, '--ignore-not-found']).catch(() => undefined);
  await kubectl(['delete', 'namespace', NS, '--ignore-not-found', '--wait=true', '--timeout=120s']).catch(
    () => undefined,
  );
  if (root) await rm(root, { recursive: true, force: true });
});

describe("Istio's OpenShift layout: istio-cni as the attachment pods request, read from the real API", () => {
  const istioLayout = async () => ({
    conf: {
      '00-multus.conf': await layout('multus/v4.3.0/00-multus.conf'),
      '10-calico.conflist': await readFile(FIXTURES('cni/configs/10-calico.conflist'), 'utf8'),
    },
    multus: { 'istio-cni.conf': await layout('istio/1.30.3/istio-cni.conf') },
  });
  const judged = async () => {
    const { conf, multus } = await istioLayout();
    return audit(conf, multus, 'istio-cni');
  };

  it("healthy: Istio's rendered definition (no spec) and pods annotated as its injector goldens annotate them", async () => {
    await applyDefinition('istio-cni');
    await meshedPod('flat', `${NS}/istio-cni`);
    await meshedPod('json', `[{"name": "istio-cni", "namespace": "${NS}"}]`);
    const verdict = await waitFor(
      'both pods listed on the node',
      async () => {
        const pods = JSON.parse(await kubectl(['get', 'pods', '-n', NS, '-o', 'json'])) as { items: unknown[] };
        return pods.items.length === 2 && judged();
      },
      60_000,
    );
    expect(codes(verdict)).toEqual([]);
    expect(verdict.attachment).toMatch(/multus\/istio-cni\.conf$/);
  });

  it('a meshed pod without the annotation: PodAttachmentMissing names it', async () => {
    await meshedPod('bare', undefined);
    const verdict = await waitFor(
      'the bare pod judged',
      async () => {
        const found = await judged();
        return ours(found).length > 0 && found;
      },
      60_000,
    );
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing']);
    expect(ours(verdict)[0]?.message).toContain(`meshed pod ${NS}/bare has no k8s.v1.cni.cncf.io/networks annotation`);
    await kubectl(['delete', 'pod', 'bare', '-n', NS, '--wait=true', '--grace-period=0', '--force']);
  });

  it('the definition without istio-cni: PodAttachmentMissing for each pod, naming the definition and its chain', async () => {
    await applyDefinition('istio-cni', JSON.stringify({ cniVersion: '0.3.1', type: 'bridge' }));
    const verdict = await judged();
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing', 'error:PodAttachmentMissing']);
    for (const finding of ours(verdict))
      expect(finding.message).toContain(`NetworkAttachmentDefinition ${NS}/istio-cni gives`);
    expect(ours(verdict)[0]?.message).toContain('whose chain [bridge] has no istio-cni');
  });

  it('the definition deleted: PodAttachmentMissing says it does not exist', async () => {
    await kubectl(['delete', 'network-attachment-definitions.k8s.cni.cncf.io', 'istio-cni', '-n', NS]);
    const verdict = await judged();
    expect(codes(verdict)).toEqual(['error:PodAttachmentMissing', 'error:PodAttachmentMissing']);
    expect(ours(verdict)[0]?.message).toContain(`NetworkAttachmentDefinition ${NS}/istio-cni does not exist`);
  });

  it('the ClusterRole printed without Multus grants no read: a warning, never a pass claimed on it', async () => {
    await applyDefinition('istio-cni');
    await grantAgentRole(false);
    try {
      const verdict = await waitFor(
        'the read refused',
        async () => {
          const found = await judged();
          return ours(found).some((finding) => finding.code === 'AttachmentUnread') && found;
        },
        60_000,
      );
      expect(codes(verdict)).toEqual(['warning:AttachmentUnread', 'warning:AttachmentUnread']);
      expect(ours(verdict)[0]?.message).toContain('403');
    } finally {
      await grantAgentRole(true);
    }
  });
});

describe("Multus's clusterNetwork naming a definition, read from the real API", () => {
  const thin = async (clusterNetwork: string) => {
    const upstream = JSON.parse(await layout('multus/v4.3.0/70-multus.conf')) as Record<string, unknown>;
    return JSON.stringify({ ...upstream, delegates: undefined, clusterNetwork, multusNamespace: NS });
  };

  it('its spec.config chain with linkerd-cni: healthy; without: MeshMissing; gone: MultusDelegateMissing', async () => {
    const primary = await readFile(FIXTURES('cni/configs/10-calico-linkerd.conflist'), 'utf8');
    await applyDefinition('primary', primary);
    const conf = { '70-multus.conf': await thin('primary') };
    const healthy = await audit(conf, {}, 'linkerd-cni');
    expect(healthy.findings).toEqual([]);
    expect(healthy.delegate).toEqual({
      file: `NetworkAttachmentDefinition ${NS}/primary (spec.config)`,
      chain: ['calico', 'portmap', 'bandwidth', 'linkerd-cni'],
    });
    await applyDefinition('primary', await readFile(FIXTURES('cni/configs/10-calico.conflist'), 'utf8'));
    expect((await audit(conf, {}, 'linkerd-cni')).findings.map((finding) => finding.code)).toEqual(['MeshMissing']);
    await kubectl(['delete', 'network-attachment-definitions.k8s.cni.cncf.io', 'primary', '-n', NS]);
    const gone = await audit(conf, {}, 'linkerd-cni');
    expect(gone.findings.map((finding) => finding.code)).toEqual(['MultusDelegateMissing']);
    expect(gone.findings[0]?.message).toContain(`no NetworkAttachmentDefinition ${NS}/primary exists`);
  });
});
