import { isMap, isScalar, isSeq, stringify, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { lineStart, type TextEdit } from './text-edits.js';

type Plain = Record<string, unknown>;

/**
 * Text edits on a parsed YAML document, in the input's own layout: a new block item is written
 * at the column of its neighbours, a flow collection gets JSON (valid YAML flow), and nothing
 * outside the edited node changes by a byte.
 */
export interface Layout {
  /** Block sequences indented under their key (`key:\n  - a`) rather than kubectl's `key:\n- a`. */
  readonly indentSeq: boolean;
}

/** A block sequence item (`- key: value`, further lines indented) with its dash at `column`. */
function blockItem(value: Plain, column: number, layout: Layout): string {
  const text = stringify([value], { indent: 2, indentSeq: layout.indentSeq, lineWidth: 0 });
  const pad = ' '.repeat(column);
  return text.replace(/^(?=.)/gm, pad);
}

/** The column of the `-` that opens the block sequence item starting at `offset`. */
function dashColumn(text: string, offset: number): number | undefined {
  const start = lineStart(text, offset);
  const match = /^( *)- /.exec(text.slice(start, offset + 1));
  return match?.[1]?.length;
}

/** Inserts `value` into `seq` so that it becomes item `index`. */
export function insertItem(
  text: string,
  seq: YAMLSeq,
  index: number,
  value: Plain,
  layout: Layout,
): TextEdit | undefined {
  const range = seq.range;
  if (!range) return undefined;
  if (seq.flow) {
    const json = JSON.stringify(value);
    const next = seq.items[index];
    if (next && isMapOrScalar(next) && next.range) return at(next.range[0], `${json}, `);
    const last = seq.items.at(-1);
    if (last && isMapOrScalar(last) && last.range) return at(last.range[1], `, ${json}`);
    return at(range[0] + 1, json);
  }
  const anchor = seq.items[Math.min(index, seq.items.length - 1)];
  if (!anchor || !isMapOrScalar(anchor) || !anchor.range) return undefined;
  const column = dashColumn(text, anchor.range[0]);
  if (column === undefined) return undefined;
  if (index < seq.items.length) return at(lineStart(text, anchor.range[0]), blockItem(value, column, layout));
  return afterLine(text, anchor.range[1], blockItem(value, column, layout));
}

/** Replaces the item `node` (a block or flow map) with `value`. */
export function replaceItem(text: string, node: YAMLMap, value: Plain, layout: Layout): TextEdit | undefined {
  const range = node.range;
  if (!range) return undefined;
  if (node.flow) return { start: range[0], end: range[1], text: JSON.stringify(value) };
  const column = dashColumn(text, range[0]);
  if (column === undefined) return undefined;
  let rendered = blockItem(value, column, layout).slice(column + 2);
  if (text[range[1] - 1] !== '\n') rendered = rendered.replace(/\n$/, '');
  const original = text.slice(range[0], range[1]);
  return rendered === original
    ? { start: range[0], end: range[0], text: '' }
    : { start: range[0], end: range[1], text: rendered };
}

/**
 * Gives the map `spec` the key `key` with a one-item list: after `after` in a block map, first
 * in a flow map, or in place of an empty or null value (`key:`, `key: null`, `key: ~`).
 */
export function setListKey(
  text: string,
  spec: YAMLMap,
  key: string,
  value: Plain,
  after: string,
  layout: Layout,
): TextEdit | undefined {
  const pair = spec.items.find((item) => isScalar(item.key) && item.key.value === key);
  if (spec.flow) {
    if (pair)
      return pair.value && isScalar(pair.value) && pair.value.range
        ? replaceRange(pair.value.range, `[${JSON.stringify(value)}]`)
        : undefined;
    const range = spec.range;
    if (!range) return undefined;
    return at(range[0] + 1, `${key}: [${JSON.stringify(value)}]${spec.items.length > 0 ? ', ' : ''}`);
  }
  const model = spec.items.find((item) => isScalar(item.key) && item.key.value === after) ?? spec.items.at(-1);
  const keyRange = (model?.key as { range?: [number, number, number] } | undefined)?.range;
  if (!model || !keyRange) return undefined;
  const keyColumn = keyRange[0] - lineStart(text, keyRange[0]);
  const column = keyColumn + seqOffset(text, model, layout);
  const item = blockItem(value, column, layout);
  if (pair) return nullValue(text, pair, item);
  const end = (model.value as { range?: [number, number, number] } | null)?.range?.[1] ?? keyRange[1];
  return afterLine(text, end, `${' '.repeat(keyColumn)}${key}:\n${item}`);
}

/** How far the model key's own block list is indented under it; the layout's when it has none. */
function seqOffset(text: string, model: Pair, layout: Layout): number {
  const value = model.value;
  const keyRange = (model.key as { range?: [number, number, number] }).range;
  if (isSeq(value) && !value.flow && keyRange) {
    const first = value.items[0];
    const start = first && isMapOrScalar(first) ? first.range?.[0] : undefined;
    const column = start === undefined ? undefined : dashColumn(text, start);
    if (column !== undefined) return column - (keyRange[0] - lineStart(text, keyRange[0]));
  }
  return layout.indentSeq ? 2 : 0;
}

function nullValue(text: string, pair: Pair, item: string): TextEdit | undefined {
  const range = (pair.value as { range?: [number, number, number] } | null)?.range;
  if (!range) return undefined;
  return { start: range[0], end: range[1], text: `\n${item.replace(/\n$/, '')}` };
}

/** Inserts `insert` at the start of the line after `offset` (a text without a final newline gets one). */
function afterLine(text: string, offset: number, insert: string): TextEdit {
  if (text[offset - 1] === '\n') return at(offset, insert);
  const newline = text.indexOf('\n', offset);
  return newline < 0 ? at(text.length, `\n${insert}`) : at(newline + 1, insert);
}

function at(offset: number, text: string): TextEdit {
  return { start: offset, end: offset, text };
}

function replaceRange(range: [number, number, number], text: string): TextEdit {
  return { start: range[0], end: range[1], text };
}

function isMapOrScalar(node: unknown): node is { range?: [number, number, number] } {
  return isMap(node) || isScalar(node) || isSeq(node);
}
