import { fail, ok, type Result } from '../reason/result.js';

/** A value of Kuma's transparent-proxy config: a scalar's text, a list of them, or a mapping. */
export type KumaConfigValue = string | readonly string[] | KumaConfigMap;
export interface KumaConfigMap {
  readonly [key: string]: KumaConfigValue;
}

interface Line {
  readonly indent: number;
  readonly text: string;
  readonly number: number;
}

/**
 * The block YAML Kuma's config.yaml is written in (nested `key: value` mappings, scalars, `[a, b]`
 * and `- item` lists, comments), read without the YAML library, which stays out of the start-up
 * snapshot. Anything else (anchors, multi-line scalars, flow mappings, tabs) is refused with its
 * line number: never guessed at. JSON documents are read as JSON.
 */
export function parseKumaConfig(text: string): Result<KumaConfigMap, 'ConfigInvalid'> {
  if (text.trimStart().startsWith('{')) {
    try {
      return ok(JSON.parse(text) as KumaConfigMap);
    } catch (error) {
      return fail('ConfigInvalid', `not JSON: ${(error as Error).message}`);
    }
  }
  const lines: Line[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const body = stripComment(raw).trimEnd();
    if (body.trim() === '' || body === '---') continue;
    if (/^\s*\t/.test(body)) return fail('ConfigInvalid', `line ${index + 1}: a tab indents it`);
    lines.push({ indent: body.length - body.trimStart().length, text: body.trim(), number: index + 1 });
  }
  const parsed = readMap(lines, 0, lines[0]?.indent ?? 0);
  if (!parsed.ok) return parsed;
  if (parsed.value.next !== lines.length) {
    const line = lines[parsed.value.next];
    return fail('ConfigInvalid', `line ${line?.number ?? 0}: unexpected indentation`);
  }
  return ok(parsed.value.map);
}

function readMap(
  lines: readonly Line[],
  start: number,
  indent: number,
): Result<{ map: KumaConfigMap; next: number }, 'ConfigInvalid'> {
  const map: Record<string, KumaConfigValue> = {};
  let index = start;
  while (index < lines.length && (lines[index] as Line).indent === indent) {
    const line = lines[index] as Line;
    const match = /^("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+):(?:\s+(.*))?$/.exec(line.text);
    if (!match) return fail('ConfigInvalid', `line ${line.number}: expected "key: value"`);
    const key = unquote(match[1] ?? '');
    const rest = match[2];
    index++;
    if (rest !== undefined && rest !== '') {
      const value = scalarOrFlowList(rest, line.number);
      if (!value.ok) return value;
      map[key] = value.value;
      continue;
    }
    const child = lines[index];
    if (child === undefined || child.indent < indent || (child.indent === indent && !child.text.startsWith('- '))) {
      map[key] = '';
      continue;
    }
    if (child.text.startsWith('- ')) {
      const items: string[] = [];
      for (; lines[index]?.indent === child.indent && lines[index]?.text.startsWith('- '); index++) {
        const item = scalarOrFlowList((lines[index] as Line).text.slice(2).trim(), (lines[index] as Line).number);
        if (!item.ok) return item;
        if (typeof item.value !== 'string') return fail('ConfigInvalid', `line ${child.number}: a nested list`);
        items.push(item.value);
      }
      map[key] = items;
      continue;
    }
    const nested = readMap(lines, index, child.indent);
    if (!nested.ok) return nested;
    map[key] = nested.value.map;
    index = nested.value.next;
  }
  return ok({ map, next: index });
}

function scalarOrFlowList(text: string, number: number): Result<KumaConfigValue, 'ConfigInvalid'> {
  // Helm's toYaml writes an empty mapping so.
  if (text === '{}') return ok({});
  if (text.startsWith('[')) {
    if (!text.endsWith(']')) return fail('ConfigInvalid', `line ${number}: a list that does not end on its line`);
    const inner = text.slice(1, -1).trim();
    return ok(inner === '' ? [] : inner.split(',').map((item) => unquote(item.trim())));
  }
  if (/^[&*!|>{]/.test(text)) return fail('ConfigInvalid', `line ${number}: YAML Interlock does not read (${text[0]})`);
  return ok(unquote(text));
}

function unquote(text: string): string {
  return /^(".*"|'.*')$/.test(text) ? text.slice(1, -1) : text;
}

/** Drops a ` #` comment outside quotes. */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '#' && (index === 0 || /\s/.test(line[index - 1] ?? ''))) return line.slice(0, index);
  }
  return line;
}
