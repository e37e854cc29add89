import { fail, ok, type Result } from '../reason/result.js';

/** How a foreign tool's option is spelled and whether it takes a value. */
export interface ForeignOption {
  /** Canonical key the mapping switches on. */
  readonly key: string;
  /** Every spelling: `-p`, `--envoy-port`, `--proxy-port`. */
  readonly names: readonly string[];
  readonly takesValue: boolean;
}

export interface ForeignArg {
  readonly key: string;
  readonly name: string;
  readonly value: string;
}

/**
 * Reads argv as Go's pflag and Rust's clap accept it: `--name value`, `--name=value`, `-p value`,
 * `-p=value`, `-pvalue` for one-letter names, and an empty value (`-x ""`). An option not in the
 * table is an error naming it: a drop-in must never ignore what it does not understand.
 */
export function readForeignArgs(
  argv: readonly string[],
  table: readonly ForeignOption[],
  tool: string,
): Result<ForeignArg[], 'ConfigInvalid'> {
  const byName = new Map(table.flatMap((option) => option.names.map((name) => [name, option] as const)));
  const args: ForeignArg[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    const equals = arg.indexOf('=');
    let name = equals > 0 ? arg.slice(0, equals) : arg;
    let inline = equals > 0 ? arg.slice(equals + 1) : undefined;
    if (!byName.has(name) && /^-[a-zA-Z].+$/.test(arg) && byName.has(arg.slice(0, 2))) {
      name = arg.slice(0, 2);
      inline = arg.slice(2);
    }
    const option = byName.get(name);
    if (!option) {
      const what = arg.startsWith('-')
        ? `unknown ${tool} option ${JSON.stringify(name)}`
        : `unexpected ${tool} argument ${JSON.stringify(arg)}`;
      return fail(
        'ConfigInvalid',
        `${what}; Interlock maps every option it knows and refuses the rest (see docs/operator.md)`,
      );
    }
    if (!option.takesValue) {
      const state = inline === undefined ? true : goBool(inline);
      if (state === undefined)
        return fail('ConfigInvalid', `${tool} option ${name} takes true or false, got ${JSON.stringify(inline)}`);
      args.push({ key: option.key, name, value: String(state) });
      continue;
    }
    const value = inline ?? argv[index + 1];
    // `--timeout --listen-addr ...` is a missing value, not a timeout called "--listen-addr".
    if (value === undefined || (inline === undefined && value.startsWith('--')))
      return fail('ConfigInvalid', `${tool} option ${name} needs a value`);
    if (inline === undefined) index++;
    args.push({ key: option.key, name, value });
  }
  return ok(args);
}

/** Go's strconv.ParseBool, which pflag applies to `--switch=VALUE` and Istio to its boolean environment. */
export function goBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}
