import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

/** The meshes' own rendered injection outputs (test/fixtures/meshes, see its README). */
export const MESH_FIXTURES = path.join(REPO_ROOT, 'test/fixtures/meshes');

/** One pinned file of sources.json: where upstream holds it and what its bytes hash to. */
export interface SourceEntry {
  readonly file: string;
  readonly mesh: 'linkerd' | 'istio' | 'istio-ambient';
  readonly kind: string;
  readonly case: string;
  readonly repository: string;
  readonly path: string;
  readonly tag: string;
  readonly commit: string;
  /** Upstream's git blob id of `path` at `commit`: the fixture's own when `trim` is "whole file". */
  readonly blob: string;
  readonly trim: string;
  readonly sha256: string;
}

type InjectionSource = SourceEntry & { readonly mesh: 'linkerd' | 'istio' };

interface Container {
  readonly name?: string;
  readonly command?: string[];
  readonly args?: string[];
  readonly env?: { name: string; value?: string }[];
  readonly securityContext?: {
    runAsUser?: number;
    runAsGroup?: number;
    capabilities?: { add?: string[]; drop?: string[] };
  };
}

interface PodTemplate {
  readonly metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> };
  readonly spec?: { initContainers?: Container[] };
}

/** One validator container as a mesh rendered it, with the pod metadata around it. */
export interface MeshValidatorCase {
  /** `linkerd edge-26.8.3 inject_...golden.yml #0` */
  readonly id: string;
  readonly mesh: 'linkerd' | 'istio';
  readonly tag: string;
  readonly fixture: string;
  readonly fixtureCase: string;
  /** The container as rendered: istio-validation / linkerd-network-validator, or istio-init. */
  readonly container: string;
  /** What reaches `interlock`: Linkerd's command path (the image's shim) plus args; Istio's args after the entrypoint. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly uid: number;
  readonly gid: number;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  /** The container was rendered as istio-init (Istio without CNI); the argv is the same template line. */
  readonly fromIstioInit: boolean;
}

/** Every entry of sources.json, injection outputs and ambient rule goldens alike. */
export function fixtureSources(): SourceEntry[] {
  return JSON.parse(readFileSync(path.join(MESH_FIXTURES, 'sources.json'), 'utf8')) as SourceEntry[];
}

/** The rendered injection outputs (YAML); the ambient goldens are iptables-save and nft text, not pods. */
function injectionSources(): InjectionSource[] {
  return fixtureSources().filter(
    (source): source is InjectionSource => source.mesh === 'linkerd' || source.mesh === 'istio',
  );
}

function podTemplates(text: string): PodTemplate[] {
  const out: PodTemplate[] = [];
  for (const doc of parseAllDocuments(text)) {
    const value = doc.toJS() as
      | { kind?: string; spec?: { template?: PodTemplate; initContainers?: unknown } & PodTemplate['spec'] }
      | null
      | undefined;
    if (!value) continue;
    if (value.spec?.template) out.push(value.spec.template);
    else if (value.kind === 'Pod') out.push(value as PodTemplate);
  }
  return out;
}

const VALIDATORS = ['linkerd-network-validator', 'istio-validation', 'istio-init'];

/** Every validator container of every fixture. */
export function meshValidatorCases(): MeshValidatorCase[] {
  const cases: MeshValidatorCase[] = [];
  for (const source of injectionSources()) {
    const templates = podTemplates(readFileSync(path.join(MESH_FIXTURES, source.file), 'utf8'));
    templates.forEach((template, index) => {
      const container = template.spec?.initContainers?.find((c) => VALIDATORS.includes(c.name ?? ''));
      if (!container) return;
      const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? '']));
      const fromIstioInit = container.name === 'istio-init';
      const args = container.args ?? [];
      cases.push({
        id: `${source.mesh} ${source.tag.startsWith('HEAD') ? source.commit.slice(0, 12) : source.tag} ${path.basename(source.file)} #${index}`,
        mesh: source.mesh,
        tag: source.tag,
        fixture: source.file,
        fixtureCase: source.case,
        container: container.name ?? '',
        argv: [...(container.command ?? []), ...args],
        env,
        uid: container.securityContext?.runAsUser ?? 0,
        gid: container.securityContext?.runAsGroup ?? container.securityContext?.runAsUser ?? 0,
        annotations: template.metadata?.annotations ?? {},
        labels: template.metadata?.labels ?? {},
        fromIstioInit,
      });
    });
  }
  return cases;
}

/**
 * istio-init's argv as istio-validation would carry it: the template renders both from the same
 * lines and adds `--run-validation --skip-rule-apply` under CNI (and drops `--force-apply`, which
 * only the non-CNI branch renders).
 */
export function asIstioValidation(testCase: MeshValidatorCase): readonly string[] {
  if (!testCase.fromIstioInit) return testCase.argv;
  return [...testCase.argv.filter((arg) => arg !== '--force-apply'), '--run-validation', '--skip-rule-apply'];
}

/**
 * istio-validation's args as Istio's sidecar template renders them under istio-cni (after the
 * image's entrypoint), read from that release's `hello.yaml.cni.injected` golden.
 */
export function istioValidationArgs(tag = '1.29.0'): readonly string[] {
  const found = meshValidatorCases().find(
    (testCase) =>
      testCase.mesh === 'istio' &&
      testCase.tag === tag &&
      testCase.container === 'istio-validation' &&
      path.basename(testCase.fixture) === 'hello.yaml.cni.injected',
  );
  if (!found) throw new Error(`no istio-validation in hello.yaml.cni.injected at Istio ${tag}`);
  return found.argv;
}
