import { isMap, isScalar, isSeq, type Document, type YAMLMap } from 'yaml';

/** Where each workload kind keeps its pod spec. */
export const POD_SPEC_PATHS: Readonly<Record<string, readonly string[]>> = {
  Pod: ['spec'],
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  ReplicaSet: ['spec', 'template', 'spec'],
  ReplicationController: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
  PodTemplate: ['template', 'spec'],
};

export interface PodTemplate {
  /** `Deployment/web` (with `items[2]` inside a List), for notes and errors. */
  readonly label: string;
  readonly spec: YAMLMap;
  /** The pod template's metadata (annotations and labels say which mesh injects it). */
  readonly metadata?: YAMLMap;
}

export interface Located {
  readonly templates: PodTemplate[];
  /** Objects with no pod template: passed through untouched, named on stderr. */
  readonly skipped: string[];
}

/** Every pod spec in one document, descending into `List` objects (kind List or *List) item by item. */
export function locatePodTemplates(doc: Document): Located {
  const located: Located = { templates: [], skipped: [] };
  // An empty document (a trailing `---`) is nothing, not an object to mention.
  const empty = doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null);
  if (!empty) visit(doc.contents, '', located);
  return located;
}

function visit(node: unknown, prefix: string, located: Located): void {
  if (!isMap(node)) {
    located.skipped.push(`${prefix}a document that is not a Kubernetes object`);
    return;
  }
  const objectMetadata = node.get('metadata');
  const kind = scalarText(node.get('kind'));
  const name = isMap(objectMetadata) ? scalarText(objectMetadata.get('name')) : '';
  const label = `${prefix}${kind || '(no kind)'}${name ? `/${name}` : ''}`;
  if (kind === 'List' || (kind.endsWith('List') && isSeq(node.get('items')))) {
    const items = node.get('items');
    if (isSeq(items)) items.items.forEach((item, index) => visit(item, `${label} items[${index}] `, located));
    return;
  }
  const path = POD_SPEC_PATHS[kind];
  const spec = path ? node.getIn(path) : undefined;
  const metadata = path ? node.getIn([...path.slice(0, -1), 'metadata']) : undefined;
  if (isMap(spec)) located.templates.push({ label, spec, ...(isMap(metadata) ? { metadata } : {}) });
  else located.skipped.push(label);
}

/** A plain scalar's text; a map, a list or nothing has none (a kind or a name is a string). */
function scalarText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}
