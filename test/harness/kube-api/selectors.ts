import type { KubeObject } from './types.js';

/** One requirement of a field or label selector: `key=value`, `key!=value`, `key`, `!key`, `key in (a,b)`. */
interface Requirement {
  readonly key: string;
  readonly op: 'eq' | 'ne' | 'exists' | 'absent' | 'in' | 'notin';
  readonly values: readonly string[];
}

function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

function parseRequirement(text: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s+\((.*)\)$/.exec(text);
  if (set)
    return { key: set[1]!, op: set[2] as 'in' | 'notin', values: set[3]!.split(',').map((value) => value.trim()) };
  const ne = text.indexOf('!=');
  if (ne > 0) return { key: text.slice(0, ne), op: 'ne', values: [text.slice(ne + 2)] };
  const eq = text.indexOf('=');
  if (eq > 0) return { key: text.slice(0, eq), op: 'eq', values: [text.slice(text[eq + 1] === '=' ? eq + 2 : eq + 1)] };
  if (text.startsWith('!')) return { key: text.slice(1), op: 'absent', values: [] };
  return { key: text, op: 'exists', values: [] };
}

export function parseSelector(text: string | null): readonly Requirement[] {
  return text ? splitTop(text).map(parseRequirement) : [];
}

function holds(requirement: Requirement, value: string | undefined): boolean {
  switch (requirement.op) {
    case 'eq':
      return (value ?? '') === requirement.values[0];
    case 'ne':
      return (value ?? '') !== requirement.values[0];
    case 'exists':
      return value !== undefined;
    case 'absent':
      return value === undefined;
    case 'in':
      return value !== undefined && requirement.values.includes(value);
    case 'notin':
      return value === undefined || !requirement.values.includes(value);
  }
}

/** A field path (`spec.nodeName`, `involvedObject.uid`) read from the object as the API server does. */
function fieldValue(object: KubeObject, path: string): string | undefined {
  let current: unknown = object;
  for (const step of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current === undefined || current === null ? undefined : String(current);
}

export function matchesFields(object: KubeObject, requirements: readonly Requirement[]): boolean {
  return requirements.every((requirement) => holds(requirement, fieldValue(object, requirement.key)));
}

export function matchesLabels(object: KubeObject, requirements: readonly Requirement[]): boolean {
  const labels = object.metadata.labels ?? {};
  return requirements.every((requirement) =>
    holds(requirement, Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined),
  );
}
