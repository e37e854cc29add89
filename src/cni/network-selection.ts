/** The pod annotation Multus reads the extra attachments from (multus-cni v4.2.2 pkg/k8sclient). */
export const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
/** The pod annotation that replaces its primary network (multus-cni v4.2.2 pkg/k8sclient defaultNetAnnot). */
export const DEFAULT_NETWORK_ANNOTATION = 'v1.multus-cni.io/default-network';

/** One attachment a pod requests: the NetworkAttachmentDefinition's namespace and name. */
export interface NetworkSelection {
  readonly namespace: string;
  readonly name: string;
  readonly interface?: string;
}

export type SelectionParse =
  | { readonly ok: true; readonly selections: readonly NetworkSelection[] }
  | { readonly ok: false; readonly message: string };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** syscall.IFNAMSIZ - 1. */
const MAX_IFNAME = 15;

/**
 * Multus's parsePodNetworkAnnotation (v4.2.2): a value holding any of `[`, `{` or `"` is a JSON
 * list of selection objects; any other is a comma list of `[namespace/]name[@interface]`, each
 * part a DNS-1123 label. A selection without a namespace takes `defaultNamespace` (the pod's).
 * A value Multus refuses fails every ADD of the pod, so it is an answer here, not a guess.
 */
export function parseNetworkSelections(value: string, defaultNamespace: string): SelectionParse {
  if (value === '') return { ok: false, message: 'the annotation is empty' };
  const parsed = /[[{"]/.test(value) ? jsonSelections(value) : commaSelections(value);
  if (!parsed.ok) return parsed;
  return {
    ok: true,
    selections: parsed.selections.map((item) => ({ ...item, namespace: item.namespace || defaultNamespace })),
  };
}

function commaSelections(value: string): SelectionParse {
  const selections: NetworkSelection[] = [];
  for (const raw of value.split(',')) {
    const item = objectName(raw.trim());
    if (!item.ok) return item;
    selections.push(item.selection);
  }
  return { ok: true, selections };
}

/** parsePodNetworkObjectName: split at `/`, then at `@`, then check the labels and the interface. */
function objectName(item: string): { ok: true; selection: NetworkSelection } | { ok: false; message: string } {
  const slash = item.split('/');
  if (slash.length > 2) return { ok: false, message: `${JSON.stringify(item)} has more than one "/"` };
  const namespace = slash.length === 2 ? (slash[0] ?? '').trim() : '';
  const at = (slash.at(-1) ?? '').split('@');
  if (at.length > 2) return { ok: false, message: `${JSON.stringify(item)} has more than one "@"` };
  const name = (at[0] ?? '').trim();
  const ifName = (at[1] ?? '').trim();
  for (const part of [namespace, name])
    if (part !== '' && !DNS_LABEL.test(part))
      return { ok: false, message: `${JSON.stringify(part)} is not a DNS-1123 label (Multus refuses it)` };
  if (ifName.length > MAX_IFNAME || /[ \t\n\v\f\r/]/.test(ifName))
    return { ok: false, message: `${JSON.stringify(ifName)} is not an interface name Multus accepts` };
  return { ok: true, selection: { namespace, name, ...(ifName === '' ? {} : { interface: ifName }) } };
}

/** json.Unmarshal into []*NetworkSelectionElement: a list of objects, name and namespace strings. */
function jsonSelections(value: string): SelectionParse {
  let decoded: unknown;
  try {
    decoded = JSON.parse(value);
  } catch (error) {
    return { ok: false, message: `the JSON form does not parse: ${(error as Error).message}` };
  }
  if (!Array.isArray(decoded)) return { ok: false, message: 'the JSON form is not a list' };
  const selections: NetworkSelection[] = [];
  for (const element of decoded) {
    if (typeof element !== 'object' || element === null || Array.isArray(element))
      return { ok: false, message: 'an element of the JSON list is not an object' };
    const fields = element as Record<string, unknown>;
    const [name, namespace, ifName] = ['name', 'namespace', 'interface'].map((key) => goField(fields, key));
    for (const [key, field] of [
      ['name', name],
      ['namespace', namespace],
      ['interface', ifName],
    ] as const)
      if (field !== undefined && field !== null && typeof field !== 'string')
        return { ok: false, message: `the JSON element's "${key}" is not a string` };
    selections.push({
      namespace: typeof namespace === 'string' ? namespace : '',
      name: typeof name === 'string' ? name : '',
      ...(typeof ifName === 'string' && ifName !== '' ? { interface: ifName } : {}),
    });
  }
  return { ok: true, selections };
}

/** encoding/json matches a key exactly, else case-insensitively. */
function goField(fields: Record<string, unknown>, key: string): unknown {
  if (Object.hasOwn(fields, key)) return fields[key];
  const folded = Object.keys(fields).find((candidate) => candidate.toLowerCase() === key);
  return folded === undefined ? undefined : fields[folded];
}
