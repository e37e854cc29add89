import type { TextEdit } from './text-edits.js';
import type { ItemChunk } from './yaml-chunks.js';

/**
 * Moves edits made on a dedented List item back into the whole text: an offset keeps its column
 * plus the removed indentation, and every inserted line gets that indentation back. An insertion
 * at a line's start goes before the line's indentation, so it carries its own.
 */
export function mapItemEdits(item: ItemChunk, edits: readonly TextEdit[], wholeText: string): TextEdit[] {
  const starts: number[] = [];
  let offset = 0;
  for (let line = 0; line < item.lines.length; line++) {
    starts.push(offset);
    offset = item.text.indexOf('\n', offset) + 1 || item.text.length;
  }
  const width = Math.max(...item.lines.map((line) => line.removed));
  const place = (at: number, lineStartGoesBefore: boolean): number => {
    let index = starts.length - 1;
    while (index > 0 && (starts[index] ?? 0) > at) index--;
    const line = item.lines[index] ?? { start: 0, removed: 0 };
    const column = at - (starts[index] ?? 0);
    if (at >= item.text.length) return lineEndOf(wholeText, item.lines.at(-1)?.start ?? 0);
    if (column === 0 && lineStartGoesBefore) return line.start;
    return line.start + line.removed + column;
  };
  return edits.map((edit) => {
    const startsLine = edit.start === 0 || item.text[edit.start - 1] === '\n';
    const start = place(edit.start, startsLine);
    const end = edit.end === edit.start ? start : place(edit.end, true);
    const pad = ' '.repeat(width);
    const text = (startsLine ? pad : '') + edit.text.replace(/\n(?=[^\n])/g, `\n${pad}`);
    return { start, end, text: startsLine && edit.text === '' ? '' : text };
  });
}

function lineEndOf(text: string, start: number): number {
  const newline = text.indexOf('\n', start);
  return newline < 0 ? text.length : newline + 1;
}
