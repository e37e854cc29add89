// Go's units (Istio's flags are Go durations) plus `d` (Linkerd's validator takes it).
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/g;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d))+$/;

/**
 * `10s`, `500ms`, `1h`, `1d`, `1.5h` and Go's compounds (`1m30s`, `1h30m`); a bare number is
 * seconds, as in Linkerd's and Istio's flags. Rounded to the millisecond.
 */
export function parseDurationMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return finite(Number(trimmed) * 1000);
  if (!WHOLE.test(trimmed)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of trimmed.matchAll(PART)) ms += Number(amount) * (UNIT_MS[unit ?? 's'] ?? 1000);
  return finite(ms);
}

function finite(ms: number): number | undefined {
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** The largest units first, as Go prints them (`1h`, `1m30s`, `1s500ms`): every output reads back. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const amount = Math.floor(rest / size);
    if (amount > 0) parts.push(`${amount}${unit}`);
    rest -= amount * size;
  }
  return parts.join('');
}
