import { parseCidr, type Cidr } from '../../addr/cidr.js';
import type { Family } from '../../addr/ip.js';
import type { PortRange } from '../../addr/port-set.js';
import type { IdRange } from '../model.js';

/** Readers of the values nft JSON puts on the right of a match: scalars, sets, ranges, prefixes. */

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as a short JSON excerpt for messages and unknown terms. */
export function short(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

export function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** `meta KEY`, `ct KEY` or `PROTOCOL FIELD`: the name of a selector, or undefined. */
export function selectorName(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  if (isObject(value['meta']) && typeof value['meta']['key'] === 'string') return `meta ${value['meta']['key']}`;
  if (isObject(value['ct']) && typeof value['ct']['key'] === 'string') return `ct ${value['ct']['key']}`;
  if (isObject(value['payload'])) return `${String(value['payload']['protocol'])} ${String(value['payload']['field'])}`;
  return undefined;
}

function setElements(right: unknown): unknown[] {
  if (isObject(right) && Array.isArray(right['set'])) return right['set'] as unknown[];
  if (Array.isArray(right)) return right;
  return [right];
}

/** Names and numbers; `@name` is a named set (nft lists its elements apart), never a value. */
export function stringsOf(right: unknown): string[] | undefined {
  const values: string[] = [];
  for (const element of setElements(right)) {
    if (typeof element === 'string' && !element.startsWith('@')) values.push(element);
    else if (typeof element === 'number') values.push(String(element));
    else return undefined;
  }
  return values.length > 0 ? values : undefined;
}

function rangesOf(right: unknown, max: number): PortRange[] | undefined {
  const ranges: PortRange[] = [];
  for (const element of setElements(right)) {
    const pair =
      typeof element === 'number'
        ? [element, element]
        : isObject(element) && Array.isArray(element['range'])
          ? (element['range'] as unknown[])
          : [];
    const [from, to] = pair;
    if (!Number.isInteger(from) || !Number.isInteger(to)) return undefined;
    if ((from as number) < 0 || (from as number) > (to as number) || (to as number) > max) return undefined;
    ranges.push({ from: from as number, to: to as number });
  }
  return ranges.length > 0 ? ranges : undefined;
}

export function portRangesOf(right: unknown): PortRange[] | undefined {
  return rangesOf(right, 65535);
}

export function idRangesOf(right: unknown): IdRange[] | undefined {
  return rangesOf(right, 0xffffffff);
}

export function cidrsOf(right: unknown, family: Family): Cidr[] | undefined {
  const cidrs: Cidr[] = [];
  for (const element of setElements(right)) {
    const prefix = isObject(element) && isObject(element['prefix']) ? element['prefix'] : undefined;
    const text =
      typeof element === 'string'
        ? element
        : prefix && typeof prefix['addr'] === 'string' && typeof prefix['len'] === 'number'
          ? `${prefix['addr']}/${prefix['len']}`
          : undefined;
    // Address ranges (`10.0.0.1-10.0.0.9`) are not written by either mesh; left unknown.
    const cidr = text === undefined ? undefined : parseCidr(text);
    if (!cidr || cidr.family !== family) return undefined;
    cidrs.push(cidr);
  }
  return cidrs.length > 0 ? cidrs : undefined;
}

/** A right-hand value as nft prints it: `{ a, b }`, `a-b`, `addr/len`. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (isObject(value) && Array.isArray(value['set']))
    return `{ ${(value['set'] as unknown[]).map(renderValue).join(', ')} }`;
  if (Array.isArray(value)) return value.map(renderValue).join(',');
  if (isObject(value) && Array.isArray(value['range'])) return (value['range'] as unknown[]).map(renderValue).join('-');
  if (isObject(value) && isObject(value['prefix']))
    return `${renderValue(value['prefix']['addr'])}/${renderValue(value['prefix']['len'])}`;
  return short(value);
}
