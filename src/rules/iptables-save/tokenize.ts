/**
 * Splits one iptables-save line into words. iptables-save quotes a word only when it holds spaces
 * or quotes (comments), with `\"` and `\\` escaped inside; anything else is whitespace-separated.
 * Returns undefined for an unterminated quote so the caller can report the line.
 */
export function tokenizeLine(line: string): string[] | undefined {
  // Most lines have no quotes: splitting is several times faster than scanning characters.
  if (!line.includes('"')) return line.split(/[ \t\r]+/).filter((word) => word !== '');
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quoted = false;
  for (let index = 0; index < line.length; index++) {
    const char = line[index] as string;
    if (quoted) {
      if (char === '\\' && index + 1 < line.length) {
        current += line[index + 1];
        index++;
      } else if (char === '"') {
        quoted = false;
      } else {
        // Copy the run up to the next quote or backslash in one slice.
        let end = index;
        while (end < line.length && line[end] !== '"' && line[end] !== '\\') end++;
        current += line.slice(index, end);
        index = end - 1;
      }
      continue;
    }
    if (char === '"') {
      quoted = true;
      inWord = true;
    } else if (char === ' ' || char === '\t' || char === '\r') {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (quoted) return undefined;
  if (inWord) words.push(current);
  return words;
}
