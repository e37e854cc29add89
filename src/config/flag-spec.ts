/**
 * How a flag takes its value: `value` needs one (`--x 1` or `--x=1`), `switch` takes none but
 * accepts `=true|false`, `optional` takes a value only in the `--x=v` form (`--dns-capture`).
 */
export type FlagArity = 'value' | 'switch' | 'optional';

export interface FlagSpec {
  readonly name: string;
  readonly arity: FlagArity;
  readonly help: string;
  readonly placeholder?: string;
}

/** `--exclude-inbound-ports` is read from `INTERLOCK_EXCLUDE_INBOUND_PORTS`. */
export function envNameOf(flagName: string): string {
  return `INTERLOCK_${flagName.replace(/-/g, '_').toUpperCase()}`;
}
