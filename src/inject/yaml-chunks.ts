/**
 * Splits a YAML stream without parsing it, so that memory follows the largest piece rather than
 * the whole input: documents at their `---` / `...` marker lines (a marker at column 0 ends a
 * document even inside a block scalar, by the YAML spec), and the items of a kubectl `List`.
 */
export interface Chunk {
  /** Offset of the chunk's first byte in the whole text. */
  readonly start: number;
  readonly end: number;
}

const MARKER = /^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm;

/** Document chunks: each starts at a marker line (or the text's start) and runs to the next. */
export function documentChunks(text: string): Chunk[] {
  const starts = [0];
  for (const match of text.matchAll(MARKER)) if (match.index > 0) starts.push(match.index);
  return starts.map((start, index) => ({ start, end: starts[index + 1] ?? text.length }));
}

/** One List item, dedented into a document of its own, with what maps its offsets back. */
export interface ItemChunk {
  readonly text: string;
  /** Per line of `text`: where the line starts in the whole text, and how many columns were removed. */
  readonly lines: ReadonlyArray<{ readonly start: number; readonly removed: number }>;
}

/**
 * The items of a block `items:` list at column 0 (how kubectl writes a List), each dedented to
 * column 0; undefined when the document is not laid out that way (the caller then parses it whole).
 */
export function listItems(text: string, chunk: Chunk): ItemChunk[] | undefined {
  const body = text.slice(chunk.start, chunk.end);
  const key = /^items:[ \t]*\r?\n/m.exec(body);
  if (!key) return undefined;
  const lineRe = /[^\n]*\n|[^\n]+$/g;
  lineRe.lastIndex = key.index + key[0].length;
  const items: Array<Array<{ start: number; line: string }>> = [];
  let column: number | undefined;
  for (let match = lineRe.exec(body); match; match = lineRe.exec(body)) {
    const line = match[0];
    const start = chunk.start + match.index;
    if (/^\s*$/.test(line) || /^\s*#/.test(line)) {
      items.at(-1)?.push({ start, line });
      continue;
    }
    const indent = /^ */.exec(line)?.[0].length ?? 0;
    column ??= indent;
    if (indent === column && /^ *-( |\r?\n|$)/.test(line)) items.push([{ start, line }]);
    else if (indent > column && items.length > 0) items.at(-1)?.push({ start, line });
    else if (indent <= column) break;
    else return undefined;
  }
  if (column === undefined) return [];
  return dedentAll(items, column + 2);
}

function dedentAll(
  items: ReadonlyArray<ReadonlyArray<{ start: number; line: string }>>,
  width: number,
): ItemChunk[] | undefined {
  const out: ItemChunk[] = [];
  for (const item of items) {
    const lines: Array<{ start: number; removed: number }> = [];
    const parts: string[] = [];
    for (const [index, { start, line }] of item.entries()) {
      const shown = index === 0 ? line.replace('-', ' ') : line;
      const removed = Math.min(width, /^ */.exec(shown)?.[0].length ?? 0);
      if (removed < width && shown.trim() !== '' && !shown.trimStart().startsWith('#')) return undefined;
      lines.push({ start, removed });
      parts.push(shown.slice(removed));
    }
    out.push({ text: parts.join(''), lines });
  }
  return out;
}
