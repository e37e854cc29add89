/**
 * The candidate one or two edits away from a typed name (the closest; the first of equals), for
 * a refusal's `did you mean` hint: flags by their names, closed sets by their values.
 */
export function closestName(typed: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(typed, name);
    if (distance <= 2 && distance < (best?.distance ?? Infinity)) best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein distance, capped: 3 stands for "more than two". */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 64) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(
        Math.min(
          (previous[j] ?? 0) + 1,
          (row[j - 1] ?? 0) + 1,
          (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
        ),
      );
    previous = row;
  }
  return previous[b.length] ?? 3;
}
