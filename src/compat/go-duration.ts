const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Go's time.ParseDuration (what pflag's Duration flag and Istio's env use): an optional sign, then
 * one or more decimal numbers each with a unit (`300ms`, `1.5h`, `2h45m`); a bare `0`. Returns
 * whole milliseconds rounded up, undefined when it does not parse or is negative.
 */
export function goDurationMs(text: string): number | undefined {
  if (text === '0' || text === '+0' || text === '-0') return 0;
  const body = text.startsWith('+') ? text.slice(1) : text;
  if (body.startsWith('-') || body === '') return undefined;
  const parts = [...body.matchAll(/([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)/gu)];
  if (parts.map((part) => part[0]).join('') !== body) return undefined;
  let total = 0;
  for (const part of parts) {
    const number = part[1] ?? '';
    if (number === '' || number === '.') return undefined;
    total += Number(number) * (UNIT_MS[part[2] ?? ''] ?? NaN);
  }
  return Number.isFinite(total) ? Math.ceil(total) : undefined;
}
