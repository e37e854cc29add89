import { fail, ok, type Result } from '../reason/result.js';
import type { Injected, YamlReason } from './inject-yaml.js';
import { namespaceInjection, type NamespaceInjection } from './mesh-admission.js';
import { planPodSpec, type InjectOptions } from './plan-pod-spec.js';
import { POD_SPEC_PATHS } from './pod-templates.js';

import { scalarText, type Plain } from './plain.js';

/** JSON text (what `kubectl get -o json` prints): its first character is `{` or `[`. */
export function looksLikeJson(text: string): boolean {
  return /^\s*[{[]/.test(text);
}

/**
 * Injects into a JSON object (or a List of them) and prints JSON again, with the input's own
 * indentation (kubectl's 4 spaces, 2, or none) and final newline.
 */
export function injectJson(text: string, options: InjectOptions, source: string): Result<Injected, YamlReason> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return fail('ManifestUnparseable', `${source}: ${(error as Error).message}`);
  }
  const notes: string[] = [];
  const state = { injected: 0, namespaces: new Map<string, NamespaceInjection>() };
  const done = visitObject(value, '', options, notes, state);
  if (!done.ok) return done;
  if (state.injected === 0) return ok({ output: text, notes, injected: 0 });
  const indent = /^[{[]\r?\n([ \t]+)/.exec(text.trimStart())?.[1] ?? '';
  const output = JSON.stringify(value, null, indent) + (/\n\s*$/.test(text) ? '\n' : '');
  return ok({ output, notes, injected: state.injected });
}

function visitObject(
  node: unknown,
  prefix: string,
  options: InjectOptions,
  notes: string[],
  state: { injected: number; namespaces: Map<string, NamespaceInjection> },
): Result<void, YamlReason> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) {
    notes.push(`note: ${prefix}a document that is not a Kubernetes object; passed through untouched`);
    return ok(undefined);
  }
  const object = node as Plain;
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const metadata = (object.metadata ?? {}) as Plain;
  const label = `${prefix}${kind || '(no kind)'}${typeof metadata.name === 'string' ? `/${metadata.name}` : ''}`;
  if (kind.endsWith('List') && Array.isArray(object.items)) {
    for (const [index, item] of (object.items as unknown[]).entries()) {
      const done = visitObject(item, `${label} items[${index}] `, options, notes, state);
      if (!done.ok) return done;
    }
    return ok(undefined);
  }
  if (kind === 'Namespace') state.namespaces.set(scalarText(metadata.name), namespaceInjection(metadata));
  const path = POD_SPEC_PATHS[kind];
  const spec = path ? dig(object, path) : undefined;
  if (!path || !spec) {
    notes.push(`note: ${label} has no pod template; passed through untouched`);
    return ok(undefined);
  }
  const podMetadata = dig(object, [...path.slice(0, -1), 'metadata']);
  const namespace = state.namespaces.get(scalarText(metadata.namespace));
  const plan = planPodSpec(
    { label, spec, ...(podMetadata ? { metadata: podMetadata } : {}), ...(namespace ? { namespace } : {}) },
    options,
  );
  if (!plan.ok) return plan;
  notes.push(...plan.value.notes);
  const inits = Array.isArray(spec.initContainers) ? (spec.initContainers as unknown[]) : [];
  inits.splice(plan.value.index, plan.value.kind === 'replace' ? 1 : 0, plan.value.container);
  spec.initContainers = inits;
  if (plan.value.volume)
    spec.volumes = [...(Array.isArray(spec.volumes) ? (spec.volumes as unknown[]) : []), plan.value.volume];
  state.injected++;
  return ok(undefined);
}

function dig(object: Plain, path: readonly string[]): Plain | undefined {
  let node: unknown = object;
  for (const key of path) node = typeof node === 'object' && node !== null ? (node as Plain)[key] : undefined;
  return typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as Plain) : undefined;
}
