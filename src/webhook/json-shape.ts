/** Bounds on a JSON text's shape, checked before it is parsed (src/webhook/webhook-budget.ts sizes them). */
export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects. */
  readonly maxDepth: number;
  /** Most values (objects, arrays, and the items and members they hold). */
  readonly maxValues: number;
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Why `body` must not be parsed, or undefined. One pass over the text, outside strings: depth
 * bounds the stack that parsing and every later walk of the value use; the count of openers and
 * commas bounds the values the parse allocates (a 3 MiB `[{},{},…]` is a million objects). A text
 * that is not JSON passes here and fails in JSON.parse, within the same bounds.
 */
export function jsonShapeProblem(body: string, limits: JsonShapeLimits): string | undefined {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let at = 0; at < body.length; at++) {
    const byte = body.charCodeAt(at);
    if (inString) {
      if (byte === BACKSLASH) at++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth++;
      values++;
      if (depth > limits.maxDepth)
        return `the request body nests deeper than ${limits.maxDepth} levels (at character ${at})`;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
    else if (byte === COMMA) values++;
    if (values > limits.maxValues) return `the request body holds more than ${limits.maxValues} JSON values`;
  }
  return undefined;
}
