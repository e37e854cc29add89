/**
 * Splits one iptables-save line into words. iptables-save quotes a word only when it holds spaces
 * or quotes (comments), with `\"` and `\\` escaped inside; anything else is separated by spaces,
 * tabs or carriage returns. Returns undefined for an unterminated quote (including a quote whose
 * last character is a lone backslash) so the caller can report the line.
 *
 * One pass over character codes, copying runs with slice: no per-character string building.
 */
export function tokenizeLine(line: string): string[] | undefined {
  const words: string[] = [];
  const length = line.length;
  let index = 0;
  while (index < length) {
    let code = line.charCodeAt(index);
    if (code === SPACE || code === TAB || code === CR) {
      index++;
      continue;
    }
    // A word: unquoted runs and quoted sections up to the next separator outside quotes.
    let runStart = index;
    let pieces: string | undefined;
    while (index < length) {
      code = line.charCodeAt(index);
      if (code === SPACE || code === TAB || code === CR) break;
      if (code !== QUOTE) {
        index++;
        continue;
      }
      pieces = (pieces ?? '') + line.slice(runStart, index);
      index++;
      runStart = index;
      let closed = false;
      while (index < length) {
        const inner = line.charCodeAt(index);
        if (inner === QUOTE) {
          pieces += line.slice(runStart, index);
          index++;
          closed = true;
          break;
        }
        if (inner === BACKSLASH && index + 1 < length) {
          pieces += line.slice(runStart, index) + line.charAt(index + 1);
          index += 2;
          runStart = index;
          continue;
        }
        index++;
      }
      if (!closed) return undefined;
      runStart = index;
    }
    words.push(pieces === undefined ? line.slice(runStart, index) : pieces + line.slice(runStart, index));
  }
  return words;
}

const SPACE = 32;
const TAB = 9;
const CR = 13;
const QUOTE = 34;
const BACKSLASH = 92;
