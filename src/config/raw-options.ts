import { configError, type ConfigError } from './config-error.js';
import { envNameOf, type FlagSpec } from './flag-spec.js';

/** What the operator said, before any value is interpreted: flag name to text and where it came from. */
export interface RawOption {
  readonly value: string;
  readonly source: string;
}
export type RawOptions = ReadonlyMap<string, RawOption>;

export type RawOptionsRead = { ok: true; options: RawOptions; positionals: string[] } | { ok: false; error: ConfigError };

/**
 * Environment first, then argv on top, so a flag always wins over `INTERLOCK_*`. Unknown flags are
 * errors, not warnings: a typo in an init container's args must not silently weaken the check.
 */
export function readRawOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  specs: readonly FlagSpec[],
): RawOptionsRead {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const options = new Map<string, RawOption>();
  for (const spec of specs) {
    const envName = envNameOf(spec.name);
    const value = env[envName];
    if (value !== undefined) options.set(spec.name, { value, source: envName });
  }
  const positionals: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (arg === '--') {
      positionals.push(...argv.slice(index + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf('=');
    const name = arg.slice(2, equals < 0 ? undefined : equals);
    const inline = equals < 0 ? undefined : arg.slice(equals + 1);
    const spec = byName.get(name);
    if (!spec) return { ok: false, error: configError(`--${name}`, inline ?? '', 'unknown flag (see --help)') };
    const source = `--${name}`;
    if (spec.arity === 'value') {
      const value = inline ?? argv[index + 1];
      if (value === undefined) return { ok: false, error: configError(source, '', 'needs a value') };
      if (inline === undefined) index++;
      options.set(name, { value, source });
    } else if (spec.arity === 'switch') {
      options.set(name, { value: inline ?? 'true', source });
    } else {
      // An optional value is only taken in the `=` form so `--dns-capture --tproxy` stays unambiguous.
      options.set(name, { value: inline ?? '', source });
    }
  }
  return { ok: true, options, positionals };
}

export function parseBoolean(option: RawOption): boolean | ConfigError {
  const text = option.value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on', ''].includes(text)) return true;
  if (['false', '0', 'no', 'off'].includes(text)) return false;
  return configError(option.source, option.value, 'expected true or false');
}
