/**
 * libcni's pkg/version ParseVersion: "" means 0.1.0; one to three dot-separated integers
 * (strconv.Atoi, so a sign is accepted); anything else is an error.
 */
function parseCniVersion(text: string): readonly [number, number, number] | undefined {
  if (text === '') return [0, 1, 0];
  const parts = text.split('.');
  if (parts.length > 3) return undefined;
  const numbers = parts.map((part) => (/^[+-]?\d+$/.test(part) ? Number(part) : NaN));
  if (numbers.some((number) => !Number.isSafeInteger(number))) return undefined;
  return [numbers[0] ?? 0, numbers[1] ?? 0, numbers[2] ?? 0];
}

/** libcni GreaterThan; undefined when either side does not parse. */
export function cniVersionGreater(a: string, b: string): boolean | undefined {
  const left = parseCniVersion(a);
  const right = parseCniVersion(b);
  if (!left || !right) return undefined;
  for (let i = 0; i < 3; i++) {
    if ((left[i] as number) !== (right[i] as number)) return (left[i] as number) > (right[i] as number);
  }
  return false;
}

/**
 * The version a plugin is asked to speak: the list's cniVersion, or 0.1.0 when it is empty (the
 * plugins' skel and libcni's validatePlugin both read "" as 0.1.0). Compared as an exact string
 * against what the plugin's VERSION answer lists, as libcni does.
 */
export function effectiveCniVersion(listVersion: string): string {
  return listVersion === '' ? '0.1.0' : listVersion;
}
