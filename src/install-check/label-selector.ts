import { at, list, record, text } from './json-path.js';

/**
 * A LabelSelector (matchLabels and matchExpressions: In, NotIn, Exists, DoesNotExist) against a
 * set of labels, as the API server evaluates a webhook's namespaceSelector.
 */
export function selects(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(record(at(selector, 'matchLabels'))))
    if (labels[key] !== value) return false;
  return list(at(selector, 'matchExpressions')).every((expression) => {
    const key = text(at(expression, 'key')) ?? '';
    const values = list(at(expression, 'values')).map(String);
    const has = Object.hasOwn(labels, key);
    switch (text(at(expression, 'operator'))) {
      case 'In':
        return has && values.includes(labels[key]!);
      case 'NotIn':
        return !has || !values.includes(labels[key]!);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        return false;
    }
  });
}

/** A Namespace's labels as the API server matches them: it labels every namespace with its own name. */
export function namespaceLabels(namespace: unknown): Record<string, string> {
  const name = text(at(namespace, 'metadata', 'name')) ?? '';
  return { ...record(at(namespace, 'metadata', 'labels')), 'kubernetes.io/metadata.name': name };
}
