/** The start of a long value, for messages: a whole 64 KiB line helps nobody. */
export function excerpt(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
