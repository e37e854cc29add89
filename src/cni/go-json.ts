import { jsonShape } from './json-prefix.js';

/**
 * A file's text decoded the way Go's encoding/json decodes it into `map[string]interface{}`
 * (what libcni does first with every configuration), or why not:
 * - `partial`: the text stops inside a valid document (a writer is mid-write, or died): the
 *   runtime fails on it now ("unexpected end of JSON input") but the next write may fix it;
 * - `invalid`: it will never parse as it is.
 */
export type GoJson =
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'partial' }
  | { readonly kind: 'invalid'; readonly message: string };

export function decodeGoJson(text: string): GoJson {
  const shape = jsonShape(text);
  if (shape.kind === 'truncated') return { kind: 'partial' };
  if (shape.kind === 'malformed')
    return { kind: 'invalid', message: `not JSON (${describeOffset(text, shape.offset)})` };
  const value: unknown = JSON.parse(text);
  // Go decodes a JSON number into float64 and refuses one that overflows it; JS yields Infinity.
  if (hasNonFiniteNumber(value, 0))
    return { kind: 'invalid', message: 'a number overflows a 64-bit float (Go refuses it)' };
  return { kind: 'value', value };
}

function describeOffset(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `unexpected ${JSON.stringify(text.slice(offset, offset + 1))} at line ${line} column ${column}`;
}

function hasNonFiniteNumber(value: unknown, depth: number): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object' || depth > 600) return false;
  return Object.values(value).some((item) => hasNonFiniteNumber(item, depth + 1));
}

/** A plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
