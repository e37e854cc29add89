/** `text` as a number when it is 1 to `maxDigits` ASCII digits and nothing else. */
export function decimal(text: string, maxDigits: number): number | undefined {
  const length = text.length;
  if (length === 0 || length > maxDigits) return undefined;
  let value = 0;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code < 48 || code > 57) return undefined;
    value = value * 10 + (code - 48);
  }
  return value;
}
