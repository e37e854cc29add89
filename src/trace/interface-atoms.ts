/**
 * Interface names as a finite partition. Every name and wildcard (`eth+`, nft `eth*`) that the
 * rules or the configuration mention splits the infinite name space into atoms: each exact name,
 * for each prefix the names under it that nothing more specific names, and "any other name".
 * Every pattern matches an atom wholly or not at all, so one representative name decides it.
 */
export interface InterfaceAtom {
  /** A concrete name inside the atom; what a pattern is evaluated on. */
  readonly representative: string;
  /** How a report names it: `eth0`, `eth+ (other)`, `any other interface`. */
  readonly label: string;
}

export interface InterfaceAtoms {
  readonly atoms: readonly InterfaceAtom[];
  /** Bit set of every atom. */
  readonly all: bigint;
  /** The names and wildcards the atoms were cut from. */
  readonly patterns: readonly string[];
}

function isWildcard(pattern: string): boolean {
  return pattern.endsWith('+') || pattern.endsWith('*');
}

/** iptables' and nft's interface wildcard: a trailing `+` / `*` matches any suffix. */
export function interfaceMatches(pattern: string, actual: string): boolean {
  if (isWildcard(pattern)) return actual.startsWith(pattern.slice(0, -1));
  return pattern === actual;
}

function inside(name: string, patterns: readonly string[], exclude: (pattern: string) => boolean): boolean {
  return patterns.some((pattern) => exclude(pattern) && interfaceMatches(pattern, name));
}

/** A name under `prefix` that no exact name and no longer prefix claims. */
function freeName(prefix: string, patterns: readonly string[]): string | undefined {
  const longer = (pattern: string): boolean =>
    isWildcard(pattern) ? pattern.slice(0, -1).length > prefix.length : true;
  for (const suffix of ['', '0', 'x9', 'q7z', 'zz42', '~']) {
    const name = prefix + suffix;
    if (name === '' && prefix === '') continue;
    if (!inside(name, patterns, longer)) return name;
  }
  return undefined;
}

export function buildInterfaceAtoms(mentioned: Iterable<string>): InterfaceAtoms {
  const patterns = [...new Set(['lo', ...mentioned])].sort();
  const atoms: InterfaceAtom[] = [];
  for (const pattern of patterns) {
    if (!isWildcard(pattern)) {
      atoms.push({ representative: pattern, label: pattern === '' ? '(none)' : pattern });
      continue;
    }
    const name = freeName(pattern.slice(0, -1), patterns);
    if (name !== undefined) atoms.push({ representative: name, label: `${pattern.slice(0, -1)}+ (other)` });
  }
  // A universal wildcard's own atom already holds every other name.
  const other = ['ilk0', '~q', '~~q7', '\u00e9q'].find(
    (name) => !patterns.some((pattern) => interfaceMatches(pattern, name)),
  );
  if (other !== undefined && !patterns.some((pattern) => pattern === '+' || pattern === '*')) {
    atoms.push({ representative: other, label: 'any other interface' });
  }
  return { atoms, all: (1n << BigInt(atoms.length)) - 1n, patterns };
}

/** The atoms a list of patterns matches, as a bit set. */
export function atomsMatching(universe: InterfaceAtoms, patterns: readonly string[]): bigint {
  let set = 0n;
  universe.atoms.forEach((atom, index) => {
    if (patterns.some((pattern) => interfaceMatches(pattern, atom.representative))) set |= 1n << BigInt(index);
  });
  return set;
}

export function atomLabels(universe: InterfaceAtoms, set: bigint): string[] {
  return universe.atoms.filter((_, index) => (set >> BigInt(index)) & 1n).map((atom) => atom.label);
}

/** The atom an actual interface name falls in, as a bit set (0n when none, which cannot happen). */
export function atomOf(universe: InterfaceAtoms, name: string): bigint {
  const index = universe.atoms.findIndex((atom) =>
    universe.patterns.every(
      (pattern) => interfaceMatches(pattern, atom.representative) === interfaceMatches(pattern, name),
    ),
  );
  return index < 0 ? 0n : 1n << BigInt(index);
}
