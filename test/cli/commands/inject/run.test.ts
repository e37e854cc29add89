import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runInject } from '../../../../src/cli/commands/inject/run.js';
import { prng } from '../../../harness/prng.js';
import { expectGolden } from '../../../harness/golden.js';
import { kubectlDecode } from '../../../inject/kubectl.js';
import type { Container, KubeDocument } from '../../../inject/shapes.js';

const FIXTURES = join(import.meta.dirname, '../../../inject/fixtures');
const GOLDEN = join(import.meta.dirname, '../../../inject/golden');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

async function inject(text: string, argv: string[] = []) {
  return runInject(['-', ...argv], {}, () => Buffer.from(text));
}

const golden = (name: string, actual: string): void => expectGolden(join(GOLDEN, name), actual);

const docs = (text: string): KubeDocument[] => parseAllDocuments(text).map((doc) => doc.toJS() as KubeDocument);

const CASES: Array<[string, string[]]> = [
  ['linkerd-cni-deployment.yaml', []],
  ['linkerd-native-sidecar-pod.yaml', ['--native-sidecar']],
  ['istio-cni-pod.yaml', ['--report-event']],
  ['workloads.yaml', ['--mesh', 'linkerd', '--rules-check']],
  ['istio-ambient-workloads.yaml', ['--mesh', 'istio-ambient']],
];

describe('interlock inject', () => {
  for (const [file, argv] of CASES) {
    it(`${file} ${argv.join(' ')}: golden, idempotent, and every untouched line survives`, async () => {
      const input = fixture(file);
      const once = await inject(input, argv);
      expect(once.exitCode).toBe(0);
      golden(`inject-${file}`, once.stdout);
      const twice = await inject(once.stdout, argv);
      expect(twice.stdout).toBe(once.stdout);
      // Comments and the order of every line Interlock does not own: the input's lines, minus the
      // replaced validator's, appear in the output in the same order.
      // yaml keeps a comment but writes one space before it; nothing else about a line may change.
      const out = once.stdout.split('\n').map((line) => line.replace(/\s+#/, ' #'));
      let cursor = 0;
      for (const line of input
        .split('\n')
        .filter((line) => line.includes('#') || /^\s*(kind|name|image: (?!.*(proxyv2|proxy:)))/.test(line))) {
        const found = out.indexOf(line.replace(/\s+#/, ' #'), cursor);
        expect(found, `line ${JSON.stringify(line)} lost or moved`).toBeGreaterThanOrEqual(cursor);
        cursor = found;
      }
    });
  }

  it("replaces Linkerd's validator in place: same name and position, Interlock's image, equivalent args, no command", async () => {
    const out = docs((await inject(fixture('linkerd-native-sidecar-pod.yaml'))).stdout)[0]!;
    const inits = out.spec.initContainers;
    expect(inits.map((container) => container.name)).toEqual(['linkerd-network-validator', 'linkerd-proxy']);
    expect(inits[0]).toMatchObject({
      image: 'mesh-interlock:dev',
      args: [
        '--mesh',
        'linkerd',
        '--log-format',
        'plain',
        '--log-level',
        'debug',
        '--outbound-port=4140',
        '--probe-address-hint=fd00::1',
        '--probe-port=20001',
        '--timeout=10000ms',
        '--pod-annotations',
        '/etc/interlock/podinfo/annotations',
        '--pod-labels',
        '/etc/interlock/podinfo/labels',
      ],
    });
    expect(inits[0]?.command).toBeUndefined();
    expect(inits[0]?.securityContext.runAsUser).toBe(65534);
  });

  it("replaces Istio's istio-validation in place with the mapped istio-iptables options, keeping its resources", async () => {
    const out = docs((await inject(fixture('istio-cni-pod.yaml'))).stdout)[0]!;
    const validation = out.spec.initContainers[0]!;
    expect(validation.name).toBe('istio-validation');
    expect(validation.args).toEqual(
      expect.arrayContaining([
        '--mesh',
        'istio',
        '--outbound-port=15001',
        '--inbound-port=15006',
        '--exclude-inbound-ports=15090,15021,15020',
      ]),
    );
    expect(validation.resources?.requests).toEqual({ cpu: '100m', memory: '128Mi' });
    expect(validation.env.map((env) => env.name)).toEqual(['POD_NAME', 'POD_NAMESPACE', 'POD_UID']);
  });

  it('inserts a new container first into every pod template of every kind, including inside a List', async () => {
    const result = await inject(fixture('workloads.yaml'), ['--mesh', 'istio']);
    const out = docs(result.stdout);
    const specs = [
      out[0]?.spec.template.spec,
      out[1]?.spec.template.spec,
      out[2]?.spec.template.spec,
      out[3]?.spec.jobTemplate.spec.template.spec,
      out[4]?.items[0]?.spec.template.spec,
    ];
    for (const spec of specs)
      expect(spec?.initContainers[0]).toMatchObject({ name: 'istio-validation', securityContext: { runAsUser: 1337 } });
    expect(out[4]?.items[1]).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings' },
      data: { key: 'value' },
    });
    expect(result.stderr).toMatch(/ConfigMap\/settings has no pod template; passed through untouched/);
    expect(result.stderr).toMatch(/Service\/db has no pod template/);
  });

  it('a kind with no pod template passes through byte for byte', async () => {
    const text =
      '# keep me\napiVersion: v1\nkind: Service\nmetadata: {name: s}   # trailing\nspec:\n  ports: [{port: 80}]\n';
    const result = await inject(text);
    expect(result).toEqual({
      exitCode: 0,
      stdout: text,
      stderr: 'interlock inject: note: Service/s has no pod template; passed through untouched\n',
    });
  });

  it('the mesh comes from the pod (validator, proxy or init container); when it cannot, --mesh is asked for (exit 64)', async () => {
    const proxied =
      'kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b}, {name: istio-proxy, image: c}]\n';
    expect(docs((await inject(proxied)).stdout)[0]?.spec.initContainers[0]?.name).toBe('istio-validation');
    const unknown = await inject('kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b}]\n');
    expect(unknown).toMatchObject({
      exitCode: 64,
      stdout: '',
      stderr: expect.stringContaining('Pod/p: cannot tell which mesh'),
    });
  });

  it('--mesh generic needs the ports for a new container', async () => {
    const text = 'kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b}]\n';
    expect(await inject(text, ['--mesh', 'generic'])).toMatchObject({
      exitCode: 64,
      stderr: expect.stringContaining('--mesh generic needs --inbound-port and --outbound-port'),
    });
    const ok = await inject(text, ['--mesh', 'generic', '--inbound-port', '8443', '--outbound-port', '8080']);
    expect(docs(ok.stdout)[0]?.spec.initContainers[0]?.args).toEqual([
      '--mesh',
      'generic',
      '--inbound-port',
      '8443',
      '--outbound-port',
      '8080',
    ]);
    expect(
      (await inject(ok.stdout, ['--mesh', 'generic', '--inbound-port', '8443', '--outbound-port', '8080'])).stdout,
    ).toBe(ok.stdout);
  });

  it('--native-sidecar refuses a validator placed after the proxy (exit 65); without it, a warning', async () => {
    const strict = await inject(fixture('istio-native-sidecar-wrong-order.yaml'), ['--native-sidecar']);
    expect(strict).toMatchObject({
      exitCode: 65,
      stdout: '',
      stderr: expect.stringContaining('runs after the native sidecar istio-proxy'),
    });
    const lenient = await inject(fixture('istio-native-sidecar-wrong-order.yaml'));
    expect(lenient.exitCode).toBe(0);
    expect(lenient.stderr).toMatch(/warning: Pod\/late: the validator runs after the native sidecar istio-proxy/);
  });

  it('bad YAML exits 65 naming line and column; a missing file 66; bad flags 64', async () => {
    const bad = await inject('apiVersion: v1\nkind: Pod\nspec:\n  containers: [\n  - a\n');
    expect(bad.exitCode).toBe(65);
    expect(bad.stderr).toMatch(/^interlock inject: ManifestUnparseable: <stdin>:\d+:\d+: /);
    const tab = await inject('kind: Pod\nspec:\n\tcontainers: []\n');
    expect(tab.stderr).toMatch(/<stdin>:3:1: /);
    expect((await runInject(['-f', '/nonexistent/x.yaml'], {})).exitCode).toBe(66);
    expect((await runInject(['--mesh', 'consul'], {})).exitCode).toBe(64);
    expect((await runInject(['a.yaml', 'b.yaml'], {})).exitCode).toBe(64);
  });

  it('fuzz: mutated manifests never crash and never exit other than 0, 64 or 65 (seeded)', async () => {
    const seeds = [fixture('linkerd-cni-deployment.yaml'), fixture('istio-cni-pod.yaml'), fixture('workloads.yaml')];
    const random = prng(1010);
    const alphabet = ['\n', ' ', ':', '-', '[', ']', '{', '}', '"', "'", '#', '\t', '&a', '*a', '!!str ', '---\n', 'x'];
    for (let round = 0; round < 300; round++) {
      const base = seeds[round % seeds.length] ?? '';
      let text = base;
      for (let edit = 0; edit < 1 + Math.floor(random() * 4); edit++) {
        const at = Math.floor(random() * text.length);
        const insert = alphabet[Math.floor(random() * alphabet.length)] ?? '';
        text =
          random() < 0.5
            ? text.slice(0, at) + insert + text.slice(at)
            : text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 8));
      }
      const result = await inject(text, ['--mesh', 'istio']);
      expect([0, 64, 65], `round ${round}: ${result.stderr}`).toContain(result.exitCode);
      if (result.exitCode !== 0) expect(result.stdout).toBe('');
    }
  });
});

describe('the real kubectl takes the output', () => {
  it('decodes every injected object into its typed struct, with the validator exactly as written', async () => {
    for (const [file, argv] of CASES) {
      const out = (await inject(fixture(file), argv)).stdout;
      const written = docs(out)
        .flatMap((doc) => (doc.kind === 'List' ? doc.items : [doc]))
        .filter((doc) => !['Service', 'ConfigMap', 'Namespace'].includes(doc.kind));
      const decoded = kubectlDecode(written.map((doc) => JSON.stringify(doc)).join('\n')) as KubeDocument[];
      // kubectl prints an absent `resources` as `{}` (a Go struct without omitempty); that is no change.
      const validatorOf = (doc: KubeDocument): Partial<Container> => {
        const container = {
          ...(doc.spec.jobTemplate?.spec.template.spec ?? doc.spec.template?.spec ?? doc.spec).initContainers[0],
        };
        if (JSON.stringify(container.resources) === '{}') delete container.resources;
        return container;
      };
      expect(decoded.map(validatorOf)).toEqual(written.map(validatorOf));
    }
  });

  it('works in a pipe: cat | interlock inject - | kubectl set env --local -f -', () => {
    const main = join(import.meta.dirname, '../../../../dist/cli/main.js');
    const piped = spawnSync(
      'bash',
      [
        '-o',
        'pipefail',
        '-c',
        `cat "$1" | node "$2" inject - | KUBECONFIG=/dev/null kubectl set env --local -f - X=1 -o yaml`,
        'pipe',
        join(FIXTURES, 'linkerd-cni-deployment.yaml'),
        main,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(piped.status, piped.stderr).toBe(0);
    const deployment = docs(piped.stdout)[0]!;
    expect(deployment.spec.template.spec.initContainers[0]).toMatchObject({
      name: 'linkerd-network-validator',
      image: 'mesh-interlock:dev',
      terminationMessagePolicy: 'FallbackToLogsOnError',
    });
    expect(execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' })).toMatch(/gitVersion/);
  });
});
