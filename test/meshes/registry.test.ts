import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { compatModeOf } from '../../src/compat/compat-argv.js';
import { EXIT } from '../../src/config/exit-codes.js';
import { PRESETS } from '../../src/config/interception.js';
import { admissionMesh, namespaceInjection } from '../../src/inject/mesh-admission.js';
import { VALIDATOR_NAMES } from '../../src/inject/plan-pod-spec.js';
import {
  dropInMeshes,
  failureCodesText,
  hasOwnPorts,
  meshIdentities,
  meshIdentity,
  meshNamesText,
  meshOfContainer,
  MESHES,
} from '../../src/mesh/meshes.js';

const src = path.resolve(import.meta.dirname, '../../src');

describe('the mesh registry (src/mesh/)', () => {
  it('names each mesh, validator container and drop-in program once', () => {
    const identities = meshIdentities();
    const once = (values: readonly string[]) => expect(new Set(values).size).toBe(values.length);
    once(identities.map((identity) => identity.name));
    once(identities.map((identity) => identity.containers.validator));
    once(dropInMeshes().flatMap(({ dropIn }) => dropIn.programs));
    // A code is shared only by the dataplanes of one mesh, read by one repair controller (Istio's
    // sidecar and ambient: istio-cni's 126).
    for (const code of new Set(identities.map((identity) => identity.failureExitCode)))
      expect(new Set(identities.filter((i) => i.failureExitCode === code).map((i) => i.cniPlugin)).size).toBe(1);
    expect(meshIdentity('istio-ambient').failureExitCode).toBe(meshIdentity('istio').failureExitCode);
    expect(MESHES).toEqual(['linkerd', 'istio', 'istio-ambient', 'kuma', 'generic']);
  });

  it("gives every mesh a failure code the repair controllers know and Interlock's table does not reserve", () => {
    const reserved = new Set<number>(Object.values(EXIT));
    for (const identity of meshIdentities()) {
      expect(reserved.has(identity.failureExitCode), identity.name).toBe(false);
      expect(identity.failureExitCode).toBeGreaterThan(0);
      expect(identity.failureExitCode).toBeLessThan(256);
    }
    expect(failureCodesText()).toBe('linkerd 95, istio 126, istio-ambient 126, kuma 98, generic 97');
    expect(meshNamesText()).toBe('linkerd, istio, istio-ambient, kuma or generic');
  });

  it('composes each preset from its module: name, container, code, plugin and capture', () => {
    for (const identity of meshIdentities()) {
      const preset = PRESETS[identity.name];
      expect(preset.spec.mesh).toBe(identity.name);
      expect(preset.validatorContainer).toBe(identity.containers.validator);
      expect(preset.failureExitCode).toBe(identity.failureExitCode);
      expect(preset.cniPlugin).toBe(identity.cniPlugin);
      for (const [field, value] of Object.entries(identity.capture))
        expect(preset.spec[field as keyof typeof preset.spec], `${identity.name} ${field}`).toEqual(value);
      expect(hasOwnPorts(identity.name)).toBe(identity.capture.inboundPort !== 0);
    }
    expect(VALIDATOR_NAMES).toEqual(
      new Set([
        'linkerd-network-validator',
        'istio-validation',
        'istio-ambient-validation',
        'kuma-validation',
        'interlock',
      ]),
    );
  });

  it("tells a pod's mesh by its injected containers, never generic by Interlock's own name", () => {
    expect(meshOfContainer('linkerd-proxy')).toBe('linkerd');
    expect(meshOfContainer('istio-init')).toBe('istio');
    expect(meshOfContainer('istio-validation')).toBe('istio');
    expect(meshOfContainer('kuma-validation')).toBe('kuma');
    expect(meshOfContainer('kuma-sidecar')).toBe('kuma');
    expect(meshOfContainer('interlock')).toBeUndefined();
    expect(meshOfContainer('proxy')).toBeUndefined();
  });

  it("reads a drop-in's mesh from its program name or its own flags", () => {
    expect(compatModeOf(['/usr/lib/linkerd/linkerd2-network-validator'])).toBe('linkerd');
    expect(compatModeOf(['--timeout', '1s', '--listen-addr=0.0.0.0:4140'])).toBe('linkerd');
    expect(compatModeOf(['istio-iptables', '-p', '15001'])).toBe('istio');
    expect(compatModeOf(['--timeout', '1s'])).toBeUndefined();
    expect(meshIdentity('istio').dropIn?.command).toBeUndefined();
  });

  it("selects pods at admission as each mesh's injector does", () => {
    const istioNamespace = namespaceInjection({ labels: { 'istio.io/rev': 'canary' } });
    expect(istioNamespace).toEqual({ linkerd: false, istio: true, kuma: false });
    expect(admissionMesh({}, [], istioNamespace)).toBe('istio');
    expect(admissionMesh({ annotations: { 'sidecar.istio.io/status': '{}' } }, [], istioNamespace)).toBeUndefined();
    expect(admissionMesh({ labels: { 'sidecar.istio.io/inject': 'false' } }, [], istioNamespace)).toBeUndefined();
    // The label wins over the annotation, as Istio's injector reads them.
    const both = { labels: { 'sidecar.istio.io/inject': 'true' }, annotations: { 'sidecar.istio.io/inject': 'false' } };
    expect(admissionMesh(both, [], undefined)).toBe('istio');
    const linkerd = { annotations: { 'linkerd.io/inject': 'ingress' } };
    expect(admissionMesh(linkerd, [], undefined)).toBe('linkerd');
    expect(admissionMesh(linkerd, ['linkerd-proxy'], undefined)).toBeUndefined();
    // Kuma's injector reads the label only (metadata.GetEnabled: enabled, true, yes), pod first.
    const kumaNamespace = namespaceInjection({ labels: { 'kuma.io/sidecar-injection': 'enabled' } });
    expect(kumaNamespace).toEqual({ linkerd: false, istio: false, kuma: true });
    expect(admissionMesh({}, [], kumaNamespace)).toBe('kuma');
    expect(admissionMesh({ labels: { 'kuma.io/sidecar-injection': 'disabled' } }, [], kumaNamespace)).toBeUndefined();
    expect(admissionMesh({ labels: { 'kuma.io/sidecar-injection': 'yes' } }, [], undefined)).toBe('kuma');
    expect(admissionMesh({}, ['kuma-sidecar'], kumaNamespace)).toBeUndefined();
  });

  /**
   * The guard of "a mesh lives in one place": outside src/mesh/, no string literal is a mesh's
   * name, container, drop-in program, CNI plugin or metadata key; code reads them from the module.
   * Generic names nothing of its own (`interlock` is the product's name everywhere).
   */
  it('leaves no identity literal outside src/mesh/', () => {
    const values = new Set<string>();
    for (const identity of meshIdentities().filter((mesh) => mesh.name !== 'generic')) {
      values.add(identity.name);
      for (const container of Object.values(identity.containers)) if (container) values.add(container);
      if (identity.cniPlugin) values.add(identity.cniPlugin);
      for (const { key } of identity.podAnnotations) values.add(key);
      for (const { annotation } of identity.annotationSwitches) values.add(annotation);
      for (const program of identity.dropIn?.programs ?? []) values.add(program);
      for (const where of [...(identity.admission?.podSwitch ?? []), ...(identity.admission?.namespaceSwitches ?? [])])
        values.add(where.key);
      if (identity.capturedPods) values.add(identity.capturedPods.label).add(identity.capturedPods.sidecarAnnotation);
    }
    // The code a module's keys name (DropInArgv, PodMetadataRules) spells its own program and
    // plugin; the start-up snapshot rehearses one Linkerd pass.
    const keyedCode = [
      'compat/compat-argv.ts',
      'compat/istio-iptables.ts',
      'compat/kumactl-validator.ts',
      'compat/linkerd-validator.ts',
    ];
    const allowed = (file: string, literal: string) =>
      keyedCode.includes(file) || (file === 'snapshot/rehearsal.ts' && literal === 'linkerd');
    const found: string[] = [];
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.startsWith(`mesh${path.sep}`)) continue;
      const code = readFileSync(path.join(src, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const match of code.matchAll(/'([^'\n]*)'|"([^"\n]*)"/g)) {
        const literal = match[1] ?? match[2] ?? '';
        if (values.has(literal) && !allowed(file.split(path.sep).join('/'), literal))
          found.push(`${file}: '${literal}'`);
      }
    }
    expect(found).toEqual([]);
  });

  /**
   * The stronger guard: a mesh's name, container, annotation key, program, port or uid written
   * *inside* any literal outside src/mesh/ (a help text's "(linkerd 4143, istio 15006)", a template
   * string), not only as the whole literal. What is still written by hand is listed here by file
   * and word, each with its reason; a new occurrence fails.
   */
  it('leaves no identity word inside a literal outside src/mesh/, beyond the listed ones', () => {
    const words = new Set<string>();
    for (const identity of meshIdentities().filter((mesh) => mesh.name !== 'generic')) {
      words.add(identity.name);
      for (const container of Object.values(identity.containers)) if (container) words.add(container);
      for (const { key } of identity.podAnnotations) words.add(key);
      for (const program of identity.dropIn?.programs ?? []) words.add(program);
      const { capture } = identity;
      for (const port of [capture.inboundPort, capture.outboundPort, capture.dnsPort, capture.inboundTunnelPort])
        if (port) words.add(String(port));
      for (const id of [...(capture.proxyUids ?? []), identity.validatorUid]) if (id !== 65534) words.add(String(id));
    }
    const listed: Record<string, readonly string[]> = {
      // The argv mappings keyed by DropInArgv name their own mesh (pod metadata is read from the modules).
      'compat/compat-argv.ts': [...words],
      'compat/istio-iptables.ts': [...words],
      'compat/kumactl-validator.ts': [...words],
      'compat/linkerd-validator.ts': [...words],
      'snapshot/rehearsal.ts': ['linkerd'],
      // Sentences about one mesh's behaviour, not figures a registry line could give.
      'config/interception-flags.ts': ['istio-ambient', 'istio', 'linkerd', '1337'],
      'reason/reason.ts': ['15001', '15006', '15008'],
      'reason/guide.ts': ['15001'],
      // `check --data-plane` compared with the command Linkerd's users know (`linkerd check --proxy`).
      'cli/commands/check/flags.ts': ['linkerd'],
      // Hand-written lists of containers still to be generated from the registry (not Kuma's yet).
      'cli/command-table.ts': ['linkerd-network-validator', 'istio-validation', 'linkerd'],
      'cli/commands/inject/flags.ts': ['linkerd-init', 'istio-init'],
    };
    const found: string[] = [];
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.startsWith(`mesh${path.sep}`)) continue;
      const name = file.split(path.sep).join('/');
      const code = readFileSync(path.join(src, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const match of code.matchAll(/'([^'\n]*)'|"([^"\n]*)"|`([^`]*)`/g)) {
        const literal = match[1] ?? match[2] ?? match[3] ?? '';
        // A module specifier names a file, not a mesh.
        if (literal.startsWith('./') || literal.startsWith('../')) continue;
        for (const word of words) {
          const escaped = word.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
          if (!new RegExp(`(^|[^\\w.-])${escaped}([^\\w-]|$)`).test(literal)) continue;
          if (!(listed[name] ?? []).includes(word))
            found.push(`${name}: ${word} in ${JSON.stringify(literal.slice(0, 60))}`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  /**
   * The same promise for figures: a mesh's port or uid written as a number in code outside
   * src/mesh/ (`const DEFAULT = 1337`, `port === 15_006`, `0x3a99`), found by TypeScript's own
   * parser, so a number in a comment or a string is not one (the test above reads those).
   * 65534 (nobody) is every unprivileged process's uid, not a mesh's.
   */
  it('leaves no port or uid of a mesh as a numeric literal outside src/mesh/', () => {
    const figures = meshFigures();
    expect([...figures.keys()].sort((a, b) => a - b)).toEqual([
      1337, 2102, 4140, 4143, 4190, 4191, 5678, 15001, 15006, 15008, 15020, 15021, 15053, 15090,
    ]);
    expect(numericLiteralsOf('x.ts', 'const a = 15_006 + 0x3a99; // 5678\nconst b = "1337";', figures)).toEqual([
      'x.ts:1: 15_006 (istio, istio-ambient, kuma)',
      'x.ts:1: 0x3a99 (istio, istio-ambient, kuma)',
    ]);
    const found: string[] = [];
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.startsWith(`mesh${path.sep}`)) continue;
      const name = file.split(path.sep).join('/');
      found.push(...numericLiteralsOf(name, readFileSync(path.join(src, file), 'utf8'), figures));
    }
    expect(found).toEqual([]);
  });
});

/** Each port and uid a mesh's module declares, with the meshes that declare it. */
function meshFigures(): Map<number, string[]> {
  const figures = new Map<number, string[]>();
  const add = (value: number | undefined, mesh: string) => {
    if (value === undefined || value === 0 || value === 65534) return;
    const meshes = figures.get(value) ?? [];
    if (!meshes.includes(mesh)) figures.set(value, [...meshes, mesh]);
  };
  for (const identity of meshIdentities()) {
    const { capture, name } = identity;
    for (const port of [capture.inboundPort, capture.outboundPort, capture.dnsPort, capture.inboundTunnelPort])
      add(port, name);
    for (const set of [capture.excludeInboundPorts, capture.excludeOutboundPorts])
      if (set?.kind === 'ranges') for (const { from, to } of set.ranges) for (let p = from; p <= to; p++) add(p, name);
    for (const id of [...(capture.proxyUids ?? []), ...(capture.proxyGids ?? []), identity.validatorUid]) add(id, name);
  }
  return figures;
}

/** `file:line: literal (meshes)` for each numeric literal in the code that is a mesh's figure. */
function numericLiteralsOf(file: string, text: string, figures: ReadonlyMap<number, readonly string[]>): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const meshes = ts.isNumericLiteral(node) ? figures.get(Number(node.text)) : undefined;
    if (meshes) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push(`${file}:${line}: ${node.getText(source)} (${meshes.join(', ')})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
