/** Bounds on a JSON text's shape, checked before it is parsed. */
export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects. */
  readonly maxDepth: number;
  /** Most values (objects, arrays, and the items and members they hold). */
  readonly maxValues: number;
}

/** The first bound the text goes past: its nesting (at the character that went too deep), or its count of values. */
export type JsonShapeExcess = { readonly kind: 'depth'; readonly at: number } | { readonly kind: 'values' };

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The first bound `text` goes past, or undefined. One pass over character codes, outside strings:
 * depth bounds the stack that parsing and every later walk of the value use; the count of openers
 * and commas bounds the values the parse allocates (a 3 MiB `[{},{},…]` is a million objects). A
 * text that is not JSON passes here and fails in JSON.parse, within the same bounds.
 */
export function jsonShapeExcess(text: string, limits: JsonShapeLimits): JsonShapeExcess | undefined {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (inString) {
      if (code === BACKSLASH) at++;
      else if (code === QUOTE) inString = false;
      continue;
    }
    if (code === QUOTE) inString = true;
    else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth++;
      values++;
      if (depth > limits.maxDepth) return { kind: 'depth', at };
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) depth--;
    else if (code === COMMA) values++;
    if (values > limits.maxValues) return { kind: 'values' };
  }
  return undefined;
}
