/** Reading the API server's JSON loosely: a missing or mistyped field is undefined, never a throw. */
export function at(value: unknown, ...keys: readonly (string | number)[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const record = (value: unknown): Record<string, string> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value as Record<string, unknown>).flatMap(([key, item]) =>
          typeof item === 'string' ? [[key, item]] : [],
        ),
      )
    : {};
