/**
 * Splits one iptables-save line into words. iptables-save quotes a word only when it holds spaces
 * or quotes (comments), with `\"` and `\\` escaped inside; anything else is whitespace-separated.
 * Returns undefined for an unterminated quote so the caller can report the line.
 */
export function tokenizeLine(line: string): string[] | undefined {
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
        current += char;
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
