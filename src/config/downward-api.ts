import { fail, ok, type Result } from '../reason/result.js';

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
  "'": "'",
};

/**
 * A downward-API file of `metadata.annotations` or `metadata.labels`: one `key="value"` per line,
 * the value quoted as Go's strconv.Quote writes it (what the kubelet writes). A line that is not
 * that shape is an error naming its number: never guessed, never skipped.
 */
export function parseDownwardApiFile(text: string): Result<Map<string, string>, 'ConfigInvalid'> {
  const entries = new Map<string, string>();
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    if (line === '' && index === lines.length - 1) continue;
    const equals = line.indexOf('=');
    const key = line.slice(0, Math.max(equals, 0));
    const value = equals > 0 ? goUnquote(line.slice(equals + 1)) : undefined;
    if (value === undefined || !/^[A-Za-z0-9][-A-Za-z0-9_./]*$/.test(key))
      return fail('ConfigInvalid', `line ${index + 1} is not key="value" as the downward API writes it`);
    entries.set(key, value);
  }
  return ok(entries);
}

/** Go's strconv.Unquote for a double-quoted string; undefined when it is not one. */
function goUnquote(quoted: string): string | undefined {
  if (quoted.length < 2 || !quoted.startsWith('"') || !quoted.endsWith('"')) return undefined;
  const body = quoted.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const char = body[i] ?? '';
    if (char === '"') return undefined;
    if (char !== '\\') {
      out += char;
      continue;
    }
    const next = body[i + 1] ?? '';
    const width = { x: 2, u: 4, U: 8 }[next];
    if (width !== undefined) {
      const hex = body.slice(i + 2, i + 2 + width);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) return undefined;
      const code = Number.parseInt(hex, 16);
      if (code > 0x10ffff) return undefined;
      out += String.fromCodePoint(code);
      i += 1 + width;
      continue;
    }
    const simple = SIMPLE_ESCAPES[next];
    if (simple === undefined) return undefined;
    out += simple;
    i++;
  }
  return out;
}
