import { MESHES } from '../../src/mesh/meshes.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { MANIFEST_FLAGS } from '../../src/cli/commands/manifest/flags.js';
import { MODE_FLAGS } from '../../src/cli/commands/manifest/run.js';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import { shell as runShell, type ShellRun } from '../harness/kubectl-shell.js';
import { REPO_ROOT } from '../harness/pod-namespace.js';

/**
 * An operator's first hour, with the real kubectl (scripts/ensure-kubectl.sh) against the API
 * stand-in: every `interlock manifest` mode the flag table declares (a mode added later is picked
 * up from MODE_FLAGS) and `inject`'s output, piped into `kubectl apply -f -` as printed. kubectl
 * finds in the stand-in's OpenAPI v3 documents that the server validates fields, sends
 * `fieldValidation=Strict`, and the stand-in refuses any field Kubernetes' types do not have.
 */
const MAIN = join(REPO_ROOT, 'dist/cli/main.js');
let api: KubeApi;
let dir: string;
let kubeconfig: string;

/** A shell pipeline as the operator types it, in this file's kubeconfig and home. */
const shell = (script: string, args: readonly string[] = [], input?: string): Promise<ShellRun> =>
  runShell({ kubeconfig, home: dir }, script, args, input);

const interlock = `${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)}`;
const kubectl = (...args: string[]): Promise<ShellRun> => shell('kubectl "$@"', args);
/** `interlock manifest ARGS | kubectl apply -f -`, exactly. */
const pipeManifest = (args: readonly string[], apply: readonly string[] = []): Promise<ShellRun> =>
  shell(`${interlock} manifest "$@" | kubectl apply ${apply.join(' ')} -f -`, args);

/**
 * kubectl validates a v1 List client-side, with OpenAPI v2 (protobuf), which the stand-in does not
 * serve; with `--validate=warn` it sends each item with fieldValidation=Warn instead, and the
 * stand-in answers every unknown field with a warning, which kubectl prints: none may appear.
 */
const LIST_VALIDATION = ['--validate=warn'];

/** A CA file for `--webhook-client-ca`, written before the runs (the printed ConfigMap carries it). */
const CLIENT_CA_FILE = join(tmpdir(), `interlock-kubectl-client-ca-${process.pid}.pem`);

/** Values for the flags that take one; a switch needs none. A value flag without one is covered in no variant. */
const SAMPLES: Readonly<Record<string, readonly (readonly string[])[]>> = {
  mesh: [
    ['--mesh', 'generic'],
    ['--mesh', 'linkerd'],
    ['--mesh', 'istio'],
    ['--mesh', 'istio-ambient'],
    ['--mesh', 'generic', '--inbound-port', '15006', '--outbound-port', '15001'],
  ],
  image: [['--image', 'registry.example/mesh-interlock:1.0']],
  'inbound-port': [['--mesh', 'istio', '--inbound-port', '15016']],
  'outbound-port': [['--mesh', 'istio', '--outbound-port', '15011']],
  output: [['--output', 'json']],
  namespace: [['--namespace', 'shop']],
  'service-account': [['--service-account', 'web,api']],
  'api-server-cidr': [['--api-server-cidr', '10.0.0.0/24,fd00::/64']],
  'metrics-namespace': [['--metrics-namespace', 'observability']],
  'webhook-client-ca': [['--webhook-client-ca', CLIENT_CA_FILE]],
};
/** `node` flags that `manifest --node-agent` passes on to the agent. */
const AGENT_SAMPLES: readonly (readonly string[])[] = [
  ['--cni-audit', '--mesh', 'linkerd'],
  ['--cni-audit', '--mesh', 'linkerd', '--runtime', 'crio', '--cni-bin-dir', '/opt/cni/bin,/usr/libexec/cni'],
  ['--action', 'label', '--taint'],
  ['--action', 'none', '--listen', '0.0.0.0:9478'],
];

/**
 * What kubectl said: the pipeline's stderr without interlock's own lines (the default-image
 * warning, and JSON mode's notes with their indented lines), which manifest-command tests check.
 */
function kubectlSaid(stderr: string): string {
  const lines = stderr.split('\n');
  const kept: string[] = [];
  let ours = false;
  for (const line of lines) {
    if (line.startsWith('interlock manifest: ')) ours = true;
    else if (!line.startsWith(' ')) ours = false;
    if (!ours) kept.push(line);
  }
  return kept.join('\n');
}

/** Every argv a user can give each mode: the mode alone, then each of its flags, one at a time. */
function variants(): { mode: string; argv: string[] }[] {
  const out: { mode: string; argv: string[] }[] = [];
  for (const [mode, flags] of Object.entries(MODE_FLAGS)) {
    const base = mode === 'container' ? [] : [`--${mode}`];
    // The init container and the node agent need --mesh; so may a mode added later that takes it
    // (rbac takes none, the webhook takes only istio-ambient).
    const needsMesh = mode !== 'webhook' && flags.includes('mesh');
    const withMesh = (argv: readonly string[]): string[] =>
      needsMesh && !argv.includes('--mesh') ? ['--mesh', 'linkerd', ...argv] : [...argv];
    out.push({ mode, argv: withMesh(base) });
    for (const name of flags.filter((flag) => flag !== mode)) {
      const flag = MANIFEST_FLAGS.find((candidate) => candidate.name === name);
      const samples = (SAMPLES[name] ?? (flag?.kind === 'switch' ? [[`--${name}`]] : [])).filter(
        (sample) =>
          sample.every((word) => !word.startsWith('--') || flags.includes(word.slice(2))) &&
          // Generic without its ports only where the mode has no port flags.
          !(sample.length === 2 && sample[1] === 'generic' && flags.includes('inbound-port')) &&
          // The webhook takes one mesh: istio-ambient, which adds its entries.
          !(mode === 'webhook' && sample[0] === '--mesh' && sample[1] !== 'istio-ambient'),
      );
      for (const sample of samples) out.push({ mode, argv: withMesh([...base, ...sample]) });
    }
    if (mode === 'node-agent')
      for (const sample of AGENT_SAMPLES) out.push({ mode, argv: withMesh([...base, ...sample]) });
  }
  return out;
}

/**
 * The container snippet pasted as the operator is told to: its lines under spec.initContainers
 * of a Pod, and the volume its comment names under spec.volumes.
 */
function podAround(snippet: string, name: string): string {
  let first = true;
  const lines = snippet.split('\n').map((line) => {
    if (line.trim() === '') return '';
    if (first && !line.startsWith('#')) {
      first = false;
      return `    - ${line}`;
    }
    return `      ${line}`;
  });
  const volumes = [...snippet.matchAll(/^#\s+(\{.*\})$/gm)].map((match) => `    - ${match[1]}`);
  return [
    'apiVersion: v1',
    'kind: Pod',
    `metadata:\n  name: ${name}`,
    'spec:',
    '  initContainers:',
    ...lines,
    '  containers:\n    - name: app\n      image: app:1',
    ...(volumes.length > 0 ? ['  volumes:', ...volumes] : []),
    '',
  ].join('\n');
}

beforeAll(async () => {
  execFileSync('bash', [join(REPO_ROOT, 'scripts/ensure-kubectl.sh')], { stdio: 'ignore' });
  api = await startKubeApi({ namespaceLifecycle: true });
  dir = mkdtempSync(join(tmpdir(), `interlock-kubectl-apply-${process.pid}-`));
  kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  writeFileSync(CLIENT_CA_FILE, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  // The operator's own namespaces (--rbac --namespace shop; the inject inputs') exist before.
  for (const name of ['shop', 'jobs', 'bookinfo']) {
    const created = await shell(
      'kubectl apply -f -',
      [],
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`,
    );
    expect(created.code, created.stderr).toBe(0);
  }
});

afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(CLIENT_CA_FILE, { force: true });
});

describe('kubectl apply takes every printed manifest, as printed', () => {
  it('covers every mode of the flag table, each flag of it', () => {
    const modes = new Set(variants().map((variant) => variant.mode));
    expect([...modes].sort()).toEqual(Object.keys(MODE_FLAGS).sort());
    expect(variants().length).toBeGreaterThan(15);
  });

  it('every object mode, piped: interlock manifest ... | kubectl apply -f -', async () => {
    let applied = 0;
    for (const { mode, argv } of variants().filter((variant) => variant.mode !== 'container')) {
      const list = argv.includes('json');
      const run = await pipeManifest(argv, list ? LIST_VALIDATION : []);
      expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(0);
      if (list) expect(kubectlSaid(run.stderr), argv.join(' ')).not.toMatch(/unknown field|Warning/);
      else expect(kubectlSaid(run.stderr), argv.join(' ')).toBe('');
      expect(run.stdout, `${mode}: ${argv.join(' ')}`).toMatch(/ (created|configured|unchanged)$/m);
      applied += run.stdout.trim().split('\n').length;
    }
    expect(applied).toBeGreaterThan(30);
  }, 300_000);

  it('every object mode, piped into kubectl apply --server-side', async () => {
    for (const { argv } of variants().filter((variant) => variant.mode !== 'container')) {
      const list = argv.includes('json');
      const run = await pipeManifest(argv, ['--server-side', ...(list ? LIST_VALIDATION : [])]);
      expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(0);
      expect(kubectlSaid(run.stderr), argv.join(' ')).not.toMatch(/unknown field|Warning|error/i);
      expect(run.stdout, argv.join(' ')).toMatch(/ serverside-applied$/m);
    }
  }, 300_000);

  it('the container snippet, pasted into a Pod with the volume its comment names', async () => {
    let index = 0;
    for (const { argv } of variants().filter((variant) => variant.mode === 'container')) {
      const printed = await shell(`${interlock} manifest "$@"`, argv);
      expect(printed.code, printed.stderr).toBe(0);
      if (argv.includes('json')) {
        expect(JSON.parse(printed.stdout)).toHaveProperty('name');
        continue;
      }
      const pod = podAround(printed.stdout, `pasted-${index++}`);
      const parsed = parseAllDocuments(pod)[0]!.toJS() as {
        spec: { initContainers: { volumeMounts?: { name: string }[] }[]; volumes?: { name: string }[] };
      };
      const mounts = parsed.spec.initContainers[0]!.volumeMounts ?? [];
      for (const mount of mounts)
        expect(
          parsed.spec.volumes?.map((volume) => volume.name),
          argv.join(' '),
        ).toContain(mount.name);
      const run = await shell('kubectl apply -f -', [], pod);
      expect(run.code, `${argv.join(' ')}: ${run.stderr}\n${pod}`).toBe(0);
      expect(run.stdout).toMatch(/^pod\/pasted-\d+ created$/m);
    }
    expect(index).toBeGreaterThan(5);
  }, 300_000);

  it('inject output, YAML and JSON, piped: interlock inject -f FILE | kubectl apply -f -', async () => {
    const fixtures = join(REPO_ROOT, 'test/inject/fixtures');
    const runs = [
      ['--mesh', 'linkerd', '-f', join(fixtures, 'workloads.yaml')],
      ['--mesh', 'linkerd', '-f', join(fixtures, 'linkerd-cni-deployment.yaml')],
      ['--mesh', 'linkerd', '--native-sidecar', '-f', join(fixtures, 'linkerd-native-sidecar-pod.yaml')],
      ['--mesh', 'istio', '--report-event', '-f', join(fixtures, 'istio-cni-pod.yaml')],
    ];
    for (const argv of runs) {
      const run = await shell(`${interlock} inject "$@" | kubectl apply ${LIST_VALIDATION.join(' ')} -f -`, argv);
      expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(0);
      expect(run.stderr).not.toMatch(/unknown field|Warning/);
      expect(run.stdout).toMatch(/ created$/m);
    }
    const json = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'json-web' },
      spec: {
        selector: { matchLabels: { app: 'json-web' } },
        template: {
          metadata: { labels: { app: 'json-web' } },
          spec: { containers: [{ name: 'web', image: 'web:1' }] },
        },
      },
    });
    const run = await shell(`${interlock} inject --mesh istio | kubectl apply -f -`, [], json);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('deployment.apps/json-web created\n');
    const stored = api.store.get('deployments', 'default', 'json-web') as unknown as {
      spec: { template: { spec: { initContainers: { name: string }[] } } };
    };
    expect(stored.spec.template.spec.initContainers.map((container) => container.name)).toEqual(['istio-validation']);
  }, 180_000);

  it('server-side apply and a server dry run take the node agent too', async () => {
    // As on a real server, a dry run creates nothing, so its objects go to a namespace that exists.
    const dry = await pipeManifest(
      ['--node-agent', '--namespace', 'jobs', '--cni-audit', '--mesh', 'linkerd'],
      ['--dry-run=server'],
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('daemonset.apps/interlock-node-linkerd created (server dry run)');
    expect(api.store.get('daemonsets', 'jobs', 'interlock-node-linkerd')).toBeUndefined();
    const args = ['--node-agent', '--namespace', 'ssa-agent', '--cni-audit', '--mesh', 'linkerd', '--taint'];
    const ssa = await pipeManifest(args, ['--server-side']);
    expect(ssa.code, ssa.stderr).toBe(0);
    expect(ssa.stdout).toContain('daemonset.apps/interlock-node-linkerd serverside-applied');
    expect(api.store.get('daemonsets', 'ssa-agent', 'interlock-node-linkerd')).toBeDefined();
  });
});

describe('kubectl refuses what a real API server refuses (so an accepted apply means something)', () => {
  it('a field Kubernetes does not know, anywhere in the DaemonSet', async () => {
    const printed = await shell(`${interlock} manifest "$@"`, [
      '--node-agent',
      '--namespace',
      'broken',
      '--cni-audit',
      '--mesh',
      'linkerd',
    ]);
    const broken = printed.stdout.replace(/^(\s+)readOnly: true$/m, '$1readOnly: true\n$1readOnlyy: true');
    expect(broken).not.toBe(printed.stdout);
    const run = await shell('kubectl apply -f -', [], broken);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /DaemonSet in version "v1" cannot be handled as a DaemonSet: strict decoding error: unknown field "spec\.template\.spec\.containers\[0\]\.volumeMounts\[0\]\.readOnlyy"/,
    );
    const serverSide = await shell('kubectl apply --server-side -f -', [], broken);
    expect(serverSide.code).not.toBe(0);
    expect(serverSide.stderr).toMatch(/strict decoding error: unknown field ".*\.readOnlyy"/);
    expect(api.store.get('daemonsets', 'broken', 'interlock-node-linkerd')).toBeUndefined();
  });

  it('a namespaced object before its namespace exists', async () => {
    const printed = await shell(`${interlock} manifest "$@"`, [
      '--node-agent',
      '--mesh',
      'linkerd',
      '--namespace',
      'no-ns',
    ]);
    const withoutNamespace = printed.stdout
      .split(/^---$/m)
      .filter((document) => !/^kind: Namespace$/m.test(document))
      .join('---');
    const run = await shell('kubectl apply -f -', [], withoutNamespace);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('namespaces "no-ns" not found');
  });
});

describe('kubectl get and describe what was applied', () => {
  it('lists the agent objects and shows the DaemonSet with its read-only CNI mounts', async () => {
    const get = await kubectl('get', 'namespace,serviceaccount,daemonset', '-n', 'interlock-system');
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/interlock-system/);
    expect(get.stdout).toMatch(/daemonset\.apps\/interlock-node-linkerd|interlock-node-linkerd/);
    const roles = await kubectl('get', 'clusterrole,clusterrolebinding', '-o', 'name');
    // One agent per mesh: each mesh applied above has its own ClusterRole and binding, none shared.
    const names = roles.stdout.split('\n').filter(Boolean);
    const of = (kind: string) =>
      names.filter((name) => name.startsWith(`${kind}.rbac.authorization.k8s.io/`)).map((name) => name.split('/')[1]);
    expect(of('clusterrolebinding').sort()).toEqual(of('clusterrole').sort());
    expect(of('clusterrole')).toContain('interlock-node-linkerd');
    for (const name of of('clusterrole')) expect(name).toMatch(new RegExp(`^interlock-node-(${MESHES.join('|')})$`));
    const applied = await shell(`${interlock} manifest "$@"`, [
      '--node-agent',
      '--namespace',
      'shown',
      '--cni-audit',
      '--mesh',
      'linkerd',
    ]);
    expect((await shell('kubectl apply -f -', [], applied.stdout)).code).toBe(0);
    const describe = await kubectl('describe', 'daemonset', 'interlock-node-linkerd', '-n', 'shown');
    expect(describe.code, describe.stderr).toBe(0);
    expect(describe.stdout).toMatch(/\/etc\/cni\/net\.d from cni-0 \(ro\)/);
    expect(describe.stdout).toMatch(/HostPathType:\s+Directory/);
    const json = await kubectl('get', 'daemonset', 'interlock-node-linkerd', '-n', 'shown', '-o', 'json');
    const printedArgs = parseAllDocuments(applied.stdout)
      .map((doc) => doc.toJS() as { kind: string; spec?: { template: { spec: { containers: { args: string[] }[] } } } })
      .find((object) => object.kind === 'DaemonSet')!.spec!.template.spec.containers[0]!.args;
    const stored = JSON.parse(json.stdout) as { spec: { template: { spec: { containers: { args: string[] }[] } } } };
    expect(stored.spec.template.spec.containers[0]!.args).toEqual(printedArgs);
  });

  it('describes the RBAC of --rbac in the operator namespace', async () => {
    const run = await kubectl('describe', 'rolebinding', 'interlock-events', '-n', 'shop');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Role:\s+Kind:\s+Role\s+Name:\s+interlock-events/);
  });
});
