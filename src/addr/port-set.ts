import { decimal } from './decimal.js';

/** An inclusive range of TCP/UDP ports. */
export interface PortRange {
  readonly from: number;
  readonly to: number;
}

/** `all` is iptables' "any port"; an empty range list is "no port". */
export type PortSet = { readonly kind: 'all' } | { readonly kind: 'ranges'; readonly ranges: readonly PortRange[] };

export const ALL_PORTS: PortSet = { kind: 'all' };
export const NO_PORTS: PortSet = { kind: 'ranges', ranges: [] };

export type PortSetParse = { ok: true; value: PortSet } | { ok: false; error: string };

/**
 * Parses the list syntax every mesh uses: `*` for all, empty for none, otherwise comma-separated
 * single ports and ranges written `a-b` (Istio) or `a:b` (iptables, Linkerd). A trailing comma
 * is tolerated because Istio's own fixtures carry one.
 */
export function parsePortSet(text: string): PortSetParse {
  // Fast path for the common single port (one per iptables rule); same answers as below.
  const single = decimal(text, 5);
  if (single !== undefined) {
    if (single < 1 || single > 65535) return { ok: false, error: `"${text}" is outside 1-65535` };
    return { ok: true, value: { kind: 'ranges', ranges: [{ from: single, to: single }] } };
  }
  const trimmed = text.trim();
  if (trimmed === '*') return { ok: true, value: ALL_PORTS };
  const items = trimmed
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const ranges: PortRange[] = [];
  for (const item of items) {
    if (item === '*') return { ok: true, value: ALL_PORTS };
    const match = /^(\d{1,5})(?:[-:](\d{1,5}))?$/.exec(item);
    if (!match) return { ok: false, error: `"${item}" is not a port or a port range` };
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (from < 1 || to > 65535 || from > 65535) return { ok: false, error: `"${item}" is outside 1-65535` };
    if (to < from) return { ok: false, error: `"${item}" is a range that ends before it starts` };
    ranges.push({ from, to });
  }
  return { ok: true, value: { kind: 'ranges', ranges } };
}

export function portSetHas(set: PortSet, port: number): boolean {
  if (set.kind === 'all') return true;
  for (const range of set.ranges) if (port >= range.from && port <= range.to) return true;
  return false;
}

export function portSetIsEmpty(set: PortSet): boolean {
  return set.kind === 'ranges' && set.ranges.length === 0;
}

export function formatPortSet(set: PortSet): string {
  if (set.kind === 'all') return '*';
  return set.ranges
    .map((range) => (range.from === range.to ? String(range.from) : `${range.from}-${range.to}`))
    .join(',');
}
