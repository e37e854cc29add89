/** A Kubernetes object, or part of one, as plain data. */
export type Plain = Record<string, unknown>;

/** A scalar's text; a map, a list, null or nothing has none (names, images and switches are scalars). */
export function scalarText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}
