import type { Result } from '../reason/result.js';

/** Every command of the `interlock` binary. */
export type CommandName =
  | 'validate'
  | 'explain'
  | 'manifest'
  | 'inject'
  | 'node'
  | 'cni-check'
  | 'version'
  | 'completion'
  | 'webhook'
  | 'check';

/**
 * One flag, declared once as data: the argv parser, the environment reader, the help text and the
 * flag tables of docs/reference.md are all derived from these declarations (see docs/ARCHITECTURE.md).
 *
 * - `switch` flags take no value at all (`--tproxy`; `--tproxy=false` is an error) and are never
 *   read from the environment unless `env` names a variable explicitly.
 * - `help` and `version` are switches with no `env`: the process environment never prints help.
 * - A single-value flag given twice is a configuration error unless `repeatable` is set.
 */
export interface FlagDef<T = unknown> {
  /** Long name without the leading dashes: `inbound-port`. */
  readonly name: string;
  /** One-letter alias without the dash (`h` for `-h`); optional, few flags have one. */
  readonly short?: string;
  readonly kind: 'value' | 'switch';
  /** Environment variable that supplies the flag when argv does not (argv wins); none if absent. */
  readonly env?: string;
  /** Shown in help: `--inbound-port PORT`. */
  readonly placeholder?: string;
  /**
   * One line, shown by --help and in docs/reference.md's tables; `{default}` in it stands for
   * the declared default, written by `showDefault` (see flagHelp), so the two never disagree.
   */
  readonly help: string;
  /** Turns the text into a value; the failure message is the problem alone (`expected 1-65535`). */
  readonly parse: (text: string) => Result<T, 'ConfigInvalid'>;
  /** The value when neither argv nor the environment gives one; undefined means "not set". */
  readonly default?: T;
  /** How help writes the default (`10s` for 10000); as text or JSON when absent. A method: read, never stored. */
  showDefault?(value: T): string;
  readonly repeatable?: boolean;
  /**
   * An old name still read (`format` for `output`), and its old variable: printed manifests and
   * scripts that use it keep working. Help shows only the current name.
   */
  readonly deprecated?: { readonly name: string; readonly env?: string };
  /**
   * The values shell completion offers, when the placeholder does not list them (`LEVEL`); a
   * placeholder such as `yaml|json` needs none.
   */
  readonly choices?: readonly string[];
}

/** `--exclude-inbound-ports` is also read from `INTERLOCK_EXCLUDE_INBOUND_PORTS`. */
export function envOf(flagName: string): string {
  return `INTERLOCK_${flagName.replace(/-/g, '_').toUpperCase()}`;
}

/** The flag's help with `{default}` written out from its declared default. */
export function flagHelp(flag: FlagDef): string {
  if (flag.default === undefined) return flag.help;
  const shown = flag.showDefault ? flag.showDefault(flag.default) : plainDefault(flag.default);
  return flag.help.replaceAll('{default}', shown);
}

// A number or a word reads as itself; anything else needs its flag's showDefault to read well.
const plainDefault = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** A flag whose value is always known: argv, its variable, else this default. */
export type DefaultedFlag<T> = FlagDef<T> & { readonly default: T };

/**
 * A value flag read from its environment variable too; `extra` adds a short name, choices, or a
 * default, and with a default the flag's value is never undefined (see flagValue).
 */
export function valueFlag<T, const E extends Partial<FlagDef<T>> = Record<never, never>>(
  name: string,
  placeholder: string,
  help: string,
  parse: FlagDef<T>['parse'],
  extra?: E,
): FlagDef<T> & E {
  return { name, kind: 'value', env: envOf(name), placeholder, help, parse, ...(extra as E) };
}
