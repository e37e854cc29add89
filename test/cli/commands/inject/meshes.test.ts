import { memoryLimitNote } from '../../../../src/inject/resources.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runInject } from '../../../../src/cli/commands/inject/run.js';
import type { KubeDocument } from '../../../inject/shapes.js';

const MESHES = join(import.meta.dirname, '../../../fixtures/meshes');
const meshFixture = (path: string) => readFileSync(join(MESHES, path), 'utf8');
const ISTIO_INIT = 'istio/HEAD-86c9f01fd735/traffic-annotations.yaml.injected';
const LINKERD_CNI = 'linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml';

const inject = (text: string, argv: string[] = []) => runInject(['-', ...argv], {}, () => Buffer.from(text));
const docs = (text: string): KubeDocument[] =>
  parseAllDocuments(text, { uniqueKeys: true }).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS() as KubeDocument;
  });
const initNames = (text: string) => docs(text)[0]!.spec.template!.spec.initContainers.map((c) => c.name);

/** The input's lines, in order, are the output's apart from whole added lines; returns those. */
function addedLines(input: string, output: string): string[] {
  const want = input.split('\n');
  const added: string[] = [];
  let next = 0;
  for (const line of output.split('\n')) {
    if (next < want.length && line === want[next]) next++;
    else added.push(line);
  }
  expect(next, 'every input line survives, in order').toBe(want.length);
  return added;
}

describe('inject on the meshes own rendered output', () => {
  it("istio-init (no CNI): the validator goes after istio-init, before the native istio-proxy, with istio-init's options", async () => {
    const input = meshFixture(ISTIO_INIT);
    const out = await inject(input);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(initNames(out.stdout)).toEqual(['istio-init', 'istio-validation', 'istio-proxy']);
    const validator = docs(out.stdout)[0]!.spec.template!.spec.initContainers[1]!;
    // The template rendered the traffic.sidecar.istio.io annotations into istio-init's argv.
    expect(validator.args).toEqual(
      expect.arrayContaining([
        '--include-outbound-cidrs=127.0.0.1/24,10.96.0.1/24',
        '--exclude-outbound-cidrs=10.96.0.2/24,10.96.0.3/24',
        '--include-inbound-ports=1,2,3',
        '--exclude-inbound-ports=15090,15021,4,5,6,15020',
        '--exclude-outbound-ports=7,8,9',
      ]),
    );
    // Byte-exact outside the edit, and a second run (the input ends with `---`) changes nothing.
    expect(input.endsWith('---\n')).toBe(true);
    const added = addedLines(input, out.stdout);
    expect(added[0]).toBe('      - name: istio-validation');
    expect(added.filter((line) => /^ {6}- /.test(line))).toEqual([
      '      - name: istio-validation',
      '      - name: interlock-podinfo',
    ]);
    expect((await inject(out.stdout)).stdout).toBe(out.stdout);
  });

  it('linkerd-init and a user-named rules writer (--after-container) come before the validator', async () => {
    const pod = (inits: string) =>
      `kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n${inits}  containers:\n  - {name: linkerd-proxy, image: p}\n`;
    const linkerd = await inject(pod('  - {name: linkerd-init, image: i}\n  - {name: other, image: o}\n'));
    expect(docs(linkerd.stdout)[0]!.spec.initContainers.map((c) => c.name)).toEqual([
      'linkerd-init',
      'linkerd-network-validator',
      'other',
    ]);
    const custom = await inject(pod('  - {name: my-rules, image: i}\n  - {name: other, image: o}\n'), [
      '--after-container',
      'my-rules',
    ]);
    expect(docs(custom.stdout)[0]!.spec.initContainers.map((c) => c.name)).toEqual([
      'my-rules',
      'linkerd-network-validator',
      'other',
    ]);
  });

  it('an existing validator before the rules writer, or after the native sidecar, is a ManifestOrder error', async () => {
    const before = await inject(
      'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n  - {name: istio-validation, image: x}\n  - {name: istio-init, image: y}\n  containers: [{name: a, image: b}]\n',
    );
    expect(before).toMatchObject({ exitCode: 65, stdout: '' });
    expect(before.stderr).toMatch(/^interlock inject: ManifestOrder: Pod\/p: the validator runs before istio-init/);
    const after = await inject(
      'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n  - {name: istio-proxy, image: y, restartPolicy: Always}\n  - {name: istio-validation, image: x}\n  containers: [{name: a, image: b}]\n',
      ['--native-sidecar'],
    );
    expect(after.stderr).toMatch(
      /^interlock inject: ManifestOrder: Pod\/p: the validator runs after the native sidecar istio-proxy/,
    );
  });

  it("a workload the mesh's webhook injects at admission is refused, naming `interlock webhook`", async () => {
    const pod = (meta: string, name = 'app') =>
      `kind: Pod\nmetadata:\n  name: p\n  namespace: shop\n${meta}spec:\n  containers: [{name: ${name}, image: b}]\n`;
    for (const meta of [
      '  annotations: {linkerd.io/inject: enabled}\n',
      '  labels: {sidecar.istio.io/inject: "true"}\n',
      '  annotations: {sidecar.istio.io/inject: "true"}\n',
    ]) {
      const out = await inject(pod(meta), ['--mesh', 'istio']);
      expect(out.exitCode, meta).toBe(65);
      expect(out.stderr).toMatch(/ManifestRefused: Pod\/p: .* injects this pod at admission .*`interlock webhook`/);
    }
    const namespace =
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {istio-injection: enabled}\n---\n';
    expect((await inject(namespace + pod(''), ['--mesh', 'istio'])).exitCode).toBe(65);
    // Opted out, or already injected (the proxy is there): injected as usual.
    const optOut = await inject(namespace + pod('  labels: {sidecar.istio.io/inject: "false"}\n'), ['--mesh', 'istio']);
    expect(optOut.exitCode, optOut.stderr).toBe(0);
    const injected = await inject(pod('  annotations: {linkerd.io/inject: enabled}\n', 'linkerd-proxy'));
    expect(injected.exitCode, injected.stderr).toBe(0);
  });

  it("Linkerd's skip annotations become the validator's exclusions (its argv never carries them)", async () => {
    const input = meshFixture(LINKERD_CNI).replace(
      '        linkerd.io/created-by:',
      '        config.linkerd.io/skip-outbound-ports: "443, 3306"\n        config.linkerd.io/skip-inbound-ports: "25"\n        linkerd.io/created-by:',
    );
    const out = await inject(input);
    expect(out.exitCode, out.stderr).toBe(0);
    const validator = docs(out.stdout)[0]!.spec.template!.spec.initContainers[0]!;
    expect(validator.args).toEqual(
      expect.arrayContaining(['--exclude-outbound-ports=443,3306', '--exclude-inbound-ports=25']),
    );
    expect((await inject(out.stdout)).stdout).toBe(out.stdout);
  });

  it('refuses hostNetwork pods, merge keys, shared anchors and foreign containers under a validator name (exit 65)', async () => {
    const cases: Array<[string, RegExp]> = [
      [
        'kind: Pod\nmetadata: {name: p}\nspec:\n  hostNetwork: true\n  containers: [{name: a, image: b}]\n',
        /hostNetwork: true/,
      ],
      [
        'base: &spec\n  initContainers: [{name: setup, image: s}]\n  containers: [{name: a, image: b}]\nkind: Pod\nmetadata: {name: p}\nspec:\n  <<: *spec\n',
        /merge key/,
      ],
      [
        'kind: List\nitems:\n- kind: Pod\n  metadata: {name: p}\n  spec:\n    initContainers: &i [{name: setup, image: s}]\n    containers: [{name: a, image: b}]\n- kind: ConfigMap\n  data: {x: *i}\n',
        /anchor or alias/,
      ],
      [
        'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: interlock, image: evil/tool:1}]\n  containers: [{name: a, image: b}]\n',
        /container named interlock \(image evil\/tool:1\) is not Interlock's validator/,
      ],
      [
        'kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: istio-validation, image: b}]\n',
        /container named istio-validation/,
      ],
    ];
    for (const [text, message] of cases) {
      const out = await inject(text, ['--mesh', 'generic', '--inbound-port', '1', '--outbound-port', '2']);
      expect(out, text).toMatchObject({ exitCode: 65, stdout: '' });
      expect(out.stderr, text).toMatch(/ManifestRefused: /);
      expect(out.stderr, text).toMatch(message);
    }
    // Interlock's own image under the generic name is the validator, replaced in place.
    const own = await inject(
      'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: interlock, image: "reg/mesh-interlock:1.0"}]\n  containers: [{name: a, image: b}]\n',
      ['--mesh', 'generic', '--inbound-port', '1', '--outbound-port', '2'],
    );
    expect(own.exitCode, own.stderr).toBe(0);
  });

  it('initContainers: null gets one key; a non-list initContainers is refused, never replaced', async () => {
    for (const value of ['null', '~', '']) {
      const out = await inject(
        `kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: ${value}\n  containers: [{name: linkerd-proxy, image: b}]\n`,
      );
      expect(out.exitCode, out.stderr).toBe(0);
      expect(out.stdout.match(/initContainers/g)).toHaveLength(1);
      expect(docs(out.stdout)[0]!.spec.initContainers.map((c) => c.name)).toEqual(['linkerd-network-validator']);
    }
    for (const value of ['{name: x}', 'oops', '7']) {
      const out = await inject(
        `kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: ${value}\n  containers: [{name: linkerd-proxy, image: b}]\n`,
      );
      expect(out, value).toMatchObject({ exitCode: 65, stdout: '' });
      expect(out.stderr).toMatch(/ManifestRefused: Pod\/p: initContainers is a .*, not a list/);
    }
  });

  it("raises an existing validator's memory limit below the rule, as the webhook does, and says so", async () => {
    const small = await inject(
      'kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n  - name: linkerd-network-validator\n    image: x\n    resources: {limits: {memory: 50Mi}}\n  containers: [{name: a, image: b}]\n',
    );
    expect(small.stderr).toContain(`note: Pod/p: ${memoryLimitNote('linkerd-network-validator', '50Mi')}`);
    expect(small.stdout).toMatch(/limits:\s+memory: 128Mi/);
    expect(small.stdout).not.toContain('50Mi');
    const enough = await inject(small.stdout.replace('128Mi', '256Mi'));
    expect(enough.stderr).not.toMatch(/memory limit/);
    expect(enough.stdout).toContain('256Mi');
  });

  it('JSON in, JSON out, with the same indentation; idempotent', async () => {
    for (const indent of [2, 4]) {
      const object = {
        apiVersion: 'v1',
        kind: 'List',
        items: [{ kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'istio-proxy', image: 'x' }] } }],
      };
      const input = `${JSON.stringify(object, null, indent)}\n`;
      const out = await inject(input);
      expect(out.exitCode, out.stderr).toBe(0);
      const parsed = JSON.parse(out.stdout) as { items: KubeDocument[] };
      expect(parsed.items[0]!.spec.initContainers[0]!.name).toBe('istio-validation');
      expect(out.stdout).toBe(`${JSON.stringify(parsed, null, indent)}\n`);
      expect((await inject(out.stdout)).stdout).toBe(out.stdout);
    }
  });
});
