import { isAlias, isMap, isScalar, isSeq, parseDocument, visit, type Document, type YAMLMap } from 'yaml';
import { fail, ok, type Result } from '../reason/result.js';
import { mapItemEdits } from './map-item-edits.js';
import { namespaceInjection, type NamespaceInjection } from './mesh-admission.js';
import { scalarText } from './plain.js';
import { planPodSpec, VALIDATOR_NAMES, type InjectOptions, type InjectReason } from './plan-pod-spec.js';
import { locatePodTemplates, type PodTemplate } from './pod-templates.js';
import { applyEdits, type TextEdit } from './text-edits.js';
import { documentChunks, listItems, type Chunk } from './yaml-chunks.js';
import { insertItem, replaceItem, setListKey, type Layout } from './yaml-edits.js';

export interface Injected {
  readonly output: string;
  /** For stderr: objects passed through untouched, ordering and memory warnings. */
  readonly notes: string[];
  readonly injected: number;
}

export type YamlReason = InjectReason | 'ManifestUnparseable' | 'ManifestTooLarge';

/**
 * Most bytes of one document parsed whole. The parsed tree costs about 50 times its text at its
 * peak (`npm run bench`, inject), so this keeps one document well inside the image's 192 MiB
 * heap; a larger kubectl List is edited item by item.
 */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

/** How to expand anchors and merge keys, said with every refusal of them. */
const EXPAND_HOW =
  "expand it first, e.g. yq 'explode(.)' FILE | interlock inject -f - (yq v4 resolves every anchor, alias and merge key)";

interface Context {
  readonly fullText: string;
  readonly options: InjectOptions;
  readonly source: string;
  readonly layout: Layout;
  readonly namespaces: Map<string, NamespaceInjection>;
  readonly notes: string[];
  injected: number;
}

/**
 * Injects the validator into every pod template of a multi-document YAML stream by text edits:
 * every byte outside the edited nodes comes out as it went in. Documents, and the items of a
 * large List, are parsed one at a time. `source` names the input in errors.
 */
export function injectYaml(text: string, options: InjectOptions, source: string): Result<Injected, YamlReason> {
  const context: Context = {
    fullText: text,
    options,
    source,
    layout: layoutOf(text),
    namespaces: new Map(),
    notes: [],
    injected: 0,
  };
  const edits: TextEdit[] = [];
  for (const chunk of documentChunks(text)) {
    const done = injectChunk(text, chunk, context);
    if (!done.ok) return done;
    edits.push(...done.value);
  }
  return ok({ output: applyEdits(text, edits), notes: context.notes, injected: context.injected });
}

function injectChunk(text: string, chunk: Chunk, context: Context): Result<TextEdit[], YamlReason> {
  if (chunk.end - chunk.start <= MAX_DOCUMENT_BYTES) {
    const edits = injectDocument(text.slice(chunk.start, chunk.end), chunk.start, '', context);
    return edits.ok ? ok(edits.value.map((edit) => shift(edit, chunk.start))) : edits;
  }
  const items = /^kind:[ \t]*\S*List[ \t]*\r?$/m.test(text.slice(chunk.start, chunk.end))
    ? listItems(text, chunk)
    : undefined;
  const body = text.slice(chunk.start, chunk.end);
  // Every pod template has a containers key; a document without one (a CRD of `helm template`
  // output) is left untouched, as a small one is, without being parsed whole.
  if (!items && !/^\s*"?containers"?\s*:/m.test(body)) {
    const kind = /^kind:[ \t]*["']?([\w.-]+)/m.exec(body)?.[1] ?? '(no kind)';
    context.notes.push(`note: ${kind} (${body.length} bytes) has no pod template; passed through untouched`);
    return ok([]);
  }
  if (!items)
    return fail(
      'ManifestTooLarge',
      `${context.source}: a document of ${chunk.end - chunk.start} bytes is over the ${MAX_DOCUMENT_BYTES}-byte cap for one document; split it, or give a kubectl List (items edited one by one)`,
    );
  const edits: TextEdit[] = [];
  for (const [index, item] of items.entries()) {
    const done = injectDocument(item.text, item.lines[0]?.start ?? 0, `List items[${index}] `, context);
    if (!done.ok) return done;
    edits.push(...mapItemEdits(item, done.value, text));
  }
  return ok(edits);
}

function injectDocument(
  text: string,
  offset: number,
  prefix: string,
  context: Context,
): Result<TextEdit[], YamlReason> {
  const doc = parseDocument(text, { prettyErrors: false, keepSourceTokens: false });
  const error = doc.errors[0];
  if (error) {
    const [line, column] = lineColumn(context.fullText, offset + error.pos[0]);
    return fail('ManifestUnparseable', `${context.source}:${line}:${column}: ${error.message.split('\n')[0]}`);
  }
  const unsafe = unsafeYaml(doc, context.source);
  if (unsafe) return fail(unsafe.reason, unsafe.message);
  rememberNamespace(doc, context);
  const { templates, skipped } = locatePodTemplates(doc);
  for (const label of skipped)
    context.notes.push(`note: ${prefix}${label} has no pod template; passed through untouched`);
  const edits: TextEdit[] = [];
  for (const template of templates) {
    const edit = injectTemplate(doc, text, { ...template, label: `${prefix}${template.label}` }, context);
    if (!edit.ok) return edit;
    edits.push(...edit.value);
    context.injected++;
  }
  return ok(edits);
}

/**
 * What text edits cannot keep right, refused (exit 65) rather than guessed: merge keys (`<<`,
 * which Kubernetes' decoder resolves and this parser does not), aliases past the alias-bomb
 * bound, and anchors or aliases where the validator goes (an edit there would change, or orphan,
 * the other place that shares the node).
 */
function unsafeYaml(doc: Document, source: string): { reason: YamlReason; message: string } | undefined {
  let found: string | undefined;
  visit(doc, {
    Pair(_key, pair) {
      if (isScalar(pair.key) && pair.key.value === '<<') found = 'a YAML merge key (<<)';
      return found ? visit.BREAK : undefined;
    },
  });
  if (found)
    return {
      reason: 'ManifestRefused',
      message: `${source}: ${found}; Kubernetes merges it, Interlock does not edit through it: ${EXPAND_HOW}`,
    };
  try {
    doc.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    return { reason: 'ManifestUnparseable', message: `${source}: ${(error as Error).message.split('\n')[0]}` };
  }
  return undefined;
}

function sharedNode(template: PodTemplate): string | undefined {
  const inits = template.spec.get('initContainers', true);
  const nodes = [template.spec, inits, template.spec.get('volumes', true)];
  if (nodes.some((node) => isAlias(node) || (node as { anchor?: string } | undefined)?.anchor))
    return 'an anchor or alias';
  let shared = false;
  // Only the validator's own item is rewritten; an anchor in another init container (Linkerd
  // edge-26.8.3's native linkerd-proxy has `&containerName`) is kept byte for byte.
  const rewritten = isSeq(inits)
    ? inits.items.filter((item) => isMap(item) && VALIDATOR_NAMES.has(scalarText(item.get('name'))))
    : [];
  for (const item of rewritten)
    visit(item as YAMLMap, {
      Node(_key, node) {
        shared ||= isAlias(node) || Boolean((node as { anchor?: string }).anchor);
        return shared ? visit.BREAK : undefined;
      },
    });
  if (isSeq(inits) && rewritten.some((item) => isAlias(item) || Boolean((item as { anchor?: string }).anchor)))
    shared = true;
  return shared ? 'an anchor or alias in the validator container' : undefined;
}

function injectTemplate(
  doc: Document,
  text: string,
  template: PodTemplate,
  context: Context,
): Result<TextEdit[], YamlReason> {
  const shared = sharedNode(template);
  if (shared)
    return fail(
      'ManifestRefused',
      `${template.label}: the pod spec holds ${shared}, which an edit would change in every place that shares it; ${EXPAND_HOW}`,
    );
  const namespace = context.namespaces.get(scalarText(doc.getIn(['metadata', 'namespace'])));
  const plan = planPodSpec(
    {
      label: template.label,
      spec: template.spec.toJS(doc) as Record<string, unknown>,
      ...(template.metadata ? { metadata: template.metadata.toJS(doc) as Record<string, unknown> } : {}),
      ...(namespace ? { namespace } : {}),
    },
    context.options,
  );
  if (!plan.ok) return plan;
  context.notes.push(...plan.value.notes);
  const inits = template.spec.get('initContainers', true);
  const volumes = template.spec.get('volumes', true);
  const { kind, index, container, volume } = plan.value;
  const { layout } = context;
  const edits = [
    kind === 'replace' && isSeq(inits)
      ? replaceItem(text, inits.items[index] as YAMLMap, container, layout)
      : isSeq(inits)
        ? insertItem(text, inits, index, container, layout)
        : setListKey(text, template.spec, 'initContainers', container, 'containers', layout),
    ...(volume === undefined
      ? []
      : [
          isSeq(volumes)
            ? insertItem(text, volumes, volumes.items.length, volume, layout)
            : setListKey(text, template.spec, 'volumes', volume, 'containers', layout),
        ]),
  ];
  return edits.every((edit) => edit !== undefined)
    ? ok(edits)
    : fail(
        'ManifestRefused',
        `${template.label}: a layout Interlock cannot edit in place; write initContainers as a list`,
      );
}

/** Namespaces earlier in the stream: their webhook switches decide the admission check of later pods. */
function rememberNamespace(doc: Document, context: Context): void {
  const object = doc.contents;
  if (!isMap(object) || scalarText(object.get('kind')) !== 'Namespace') return;
  const metadata = object.get('metadata');
  if (!isMap(metadata)) return;
  context.namespaces.set(
    scalarText(metadata.get('name')),
    namespaceInjection(metadata.toJS(doc) as Record<string, unknown>),
  );
}

/**
 * The input's own layout, so new lines look like their neighbours: kubectl writes sequences
 * unindented under their key (`containers:\n- name`).
 */
function layoutOf(text: string): Layout {
  const sample = text.slice(0, 64 * 1024);
  const unindented = /^( *)[^\s#-][^\n]*:[ \t]*\n\1- /m.test(sample);
  const indented = /^( *)[^\s#-][^\n]*:[ \t]*\n\1 +- /m.test(sample);
  return { indentSeq: indented || !unindented };
}

function shift(edit: TextEdit, by: number): TextEdit {
  return { start: edit.start + by, end: edit.end + by, text: edit.text };
}

function lineColumn(text: string, offset: number): [number, number] {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return [line, offset - before.lastIndexOf('\n')];
}
