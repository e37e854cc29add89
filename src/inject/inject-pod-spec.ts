import { isMap, isSeq, Pair, Scalar, YAMLMap, YAMLSeq, type Document } from 'yaml';
import { compatToValidate } from '../compat/compat-argv.js';
import { MESHES, PRESETS, type Mesh } from '../config/interception.js';
import { fail, ok, type Result } from '../reason/result.js';
import type { PodTemplate } from './pod-templates.js';
import { podIdentityEnv, securityContextOf, validatorArgs, validatorContainer } from './validator-container.js';

export interface InjectOptions {
  /** Unset: from the pod (an existing validator, or the proxy container's name), else generic. */
  readonly mesh?: Mesh;
  readonly image: string;
  readonly rulesCheck: boolean;
  readonly reportEvent: boolean;
  readonly nativeSidecar: boolean;
  /** validate flags for a new container (the generic preset's ports); an existing one keeps its own. */
  readonly extraArgs?: readonly string[];
}

const MESH_OF_NAME: Readonly<Record<string, Mesh>> = {
  'linkerd-network-validator': 'linkerd',
  'istio-validation': 'istio',
  'linkerd-proxy': 'linkerd',
  'istio-proxy': 'istio',
};
const VALIDATOR_NAMES = new Set(MESHES.map((mesh) => PRESETS[mesh].validatorContainer));
/** Flags Interlock manages itself; everything else in an existing validator's args is kept. */
const MANAGED = new Map([
  ['--mesh', 1],
  ['--rules', 1],
  ['--report-event', 0],
]);

/** Injects the validator into one pod spec, in place; returns a note when something is worth saying. */
export function injectPodSpec(
  doc: Document,
  template: PodTemplate,
  options: InjectOptions,
): Result<string | undefined, 'ManifestUnparseable' | 'ConfigInvalid'> {
  const { spec, label } = template;
  const inits = initContainers(doc, spec);
  const names = [...containerNames(inits), ...containerNames(spec.get('containers'))];
  const index = inits.items.findIndex((item) => isMap(item) && VALIDATOR_NAMES.has(String(item.get('name'))));
  const existing = index >= 0 ? (inits.items[index] as YAMLMap) : undefined;
  const existingName = existing ? String(existing.get('name')) : undefined;
  const mesh =
    options.mesh ??
    MESH_OF_NAME[existingName ?? ''] ??
    names.map((name) => MESH_OF_NAME[name]).find(Boolean) ??
    meshOfMetadata(template.metadata);
  // The generic preset needs the proxy's ports, which a pod template does not say: guessing would ship a broken validator.
  if (!mesh)
    return fail(
      'ConfigInvalid',
      `${label}: cannot tell which mesh injects this pod (no validator, proxy container or mesh annotation); give --mesh linkerd|istio|generic`,
    );
  if (existing) {
    const extra = equivalentArgs(existing, label);
    if (!extra.ok) return extra;
    updateExisting(doc, existing, mesh, extra.value, { ...options, extraArgs: [] });
  } else {
    if (
      mesh === 'generic' &&
      !(options.extraArgs?.includes('--inbound-port') && options.extraArgs.includes('--outbound-port'))
    ) {
      return fail(
        'ConfigInvalid',
        `${label}: --mesh generic needs --inbound-port and --outbound-port (the proxy's redirect ports)`,
      );
    }
    inits.items.unshift(doc.createNode(validatorContainer({ ...options, mesh })));
  }
  return ok(orderNote(inits, Math.max(index, 0), label, options.nativeSidecar));
}

/** `linkerd.io/inject` / `sidecar.istio.io/inject` annotations or labels, as the meshes' webhooks read them. */
function meshOfMetadata(metadata: YAMLMap | undefined): Mesh | undefined {
  for (const field of ['annotations', 'labels']) {
    const map = metadata?.get(field);
    if (!isMap(map)) continue;
    if (['enabled', 'ingress'].includes(String(map.get('linkerd.io/inject')))) return 'linkerd';
    if (String(map.get('sidecar.istio.io/inject')) === 'true') return 'istio';
  }
  return undefined;
}

function initContainers(doc: Document, spec: YAMLMap): YAMLSeq {
  const found = spec.get('initContainers');
  if (isSeq(found)) return found;
  const seq = doc.createNode([]) as YAMLSeq;
  const pair = new Pair(new Scalar('initContainers'), seq);
  // Right after `containers`, next to what it guards, and after any comment that leads the spec.
  const at = spec.items.findIndex((item) => String((item.key as Scalar | undefined)?.value) === 'containers');
  if (found !== undefined) spec.delete('initContainers');
  spec.items.splice(at < 0 ? spec.items.length : at + 1, 0, pair);
  return seq;
}

/** The validate flags equivalent to what the container runs now: the mesh's own argv, mapped, or Interlock's. */
function equivalentArgs(container: YAMLMap, label: string): Result<string[], 'ManifestUnparseable'> {
  const command = strings(container.get('command'));
  const args = strings(container.get('args'));
  const foreign = [...command, ...args];
  const mapped = compatToValidate(foreign, {});
  if (mapped && !mapped.ok)
    return fail('ManifestUnparseable', `${label}: container ${String(container.get('name'))}: ${mapped.error.message}`);
  const validate = mapped ? mapped.value.slice(1) : args[0] === 'validate' ? args.slice(1) : args;
  const extra: string[] = [];
  for (let index = 0; index < validate.length; index++) {
    const flag = validate[index] ?? '';
    const arity = MANAGED.get(flag.split('=')[0] ?? '');
    if (arity === undefined) extra.push(flag);
    else if (!flag.includes('=')) index += arity;
  }
  return ok(extra);
}

function updateExisting(
  doc: Document,
  container: YAMLMap,
  mesh: Mesh,
  extraArgs: string[],
  options: InjectOptions,
): void {
  container.set('image', options.image);
  // Interlock's image starts `interlock validate`; Linkerd's command path would bypass nothing, but is not needed.
  container.delete('command');
  container.set('args', doc.createNode(validatorArgs({ ...options, mesh, extraArgs })));
  const env = container.get('env');
  const present = new Set(isSeq(env) ? env.items.map((item) => (isMap(item) ? String(item.get('name')) : '')) : []);
  const missing = podIdentityEnv().filter((entry) => !present.has(String(entry.name)));
  if (isSeq(env)) for (const entry of missing) env.items.push(doc.createNode(entry));
  else container.set('env', doc.createNode(missing));
  if (options.rulesCheck) container.set('securityContext', doc.createNode(securityContextOf(mesh, true)));
  container.set('terminationMessagePolicy', 'FallbackToLogsOnError');
}

/**
 * The validator binds the proxy's redirect port, so with native sidecars it must run before the
 * proxy (an init container with restartPolicy: Always). A new container is always first; an
 * existing one keeps its position, so its order is checked.
 */
function orderNote(inits: YAMLSeq, index: number, label: string, required: boolean): string | undefined {
  const before = inits.items
    .slice(0, index)
    .filter((item) => isMap(item) && String(item.get('restartPolicy')) === 'Always');
  if (before.length === 0) return undefined;
  const names = before.map((item) => String((item as YAMLMap).get('name'))).join(', ');
  const sentence = `${label}: the validator runs after the native sidecar ${names}, whose port it must bind first; move it before ${names}`;
  return required ? `error: ${sentence}` : `warning: ${sentence}`;
}

function containerNames(node: unknown): string[] {
  return isSeq(node) ? node.items.map((item) => (isMap(item) ? String(item.get('name')) : '')) : [];
}

function strings(node: unknown): string[] {
  return isSeq(node) ? node.items.map((item) => String(item instanceof Scalar ? item.value : item)) : [];
}
