import { parseArgs } from 'node:util';
import { ok } from '../reason/result.js';
import { configInvalid, type ConfigResult } from './config-error.js';
import { echoValue } from './echo-value.js';
import type { CommandName, FlagDef } from './flag-def.js';
import type { ParsedFlags } from './parsed-flags.js';
import { closestName } from './closest-name.js';

// Read once when the module loads, so the start-up snapshot already holds node's parseArgs.
const strictParseArgs = parseArgs;

type Env = Readonly<Record<string, string | undefined>>;
type Token = ReturnType<typeof parseArgs>['tokens'] extends (infer T)[] | undefined ? T : never;
interface Given {
  readonly texts: string[];
}

/**
 * The one command-line reader of every command: argv through node:util's strict `parseArgs`
 * (unknown flags, a switch given a value, a value flag without one and stray arguments are
 * errors), then each flag's environment variable where argv is silent, then its default. A
 * single-value flag given twice is an error: the last of two values must never win silently.
 */
export function parseCommandLine(
  command: CommandName,
  argv: readonly string[],
  env: Env,
  flags: readonly FlagDef[],
): ConfigResult<ParsedFlags> {
  const tokens = strictTokens(command, argv, flags);
  if (!tokens.ok) return tokens;
  const given = new Map<string, Given>();
  for (const token of tokens.value) {
    // A `--` with nothing after it: parseArgs takes it as the end of flags; we take no arguments.
    if (token.kind === 'option-terminator')
      return configInvalid('argument', '--', `unexpected argument (interlock ${command} takes flags only)`);
    if (token.kind !== 'option') continue;
    const name = flags.find((flag) => flag.deprecated?.name === token.name)?.name ?? token.name;
    const entry = given.get(name) ?? { texts: [] };
    entry.texts.push(token.value ?? '');
    given.set(name, entry);
  }
  const values = new Map<string, unknown>();
  const sources = new Map<string, string>();
  for (const flag of flags) {
    const read = readFlag(flag, given.get(flag.name), env);
    if (!read.ok) return read;
    if (read.value === undefined) continue;
    values.set(flag.name, read.value.value);
    if (read.value.source) sources.set(flag.name, read.value.source);
  }
  return ok({ command, values, sources });
}

type FlagRead = ConfigResult<{ value: unknown; source?: string } | undefined>;

function readFlag(flag: FlagDef, given: Given | undefined, env: Env): FlagRead {
  const source = `--${flag.name}`;
  if (given && flag.kind === 'switch') return ok({ value: true, source });
  if (given) {
    if (given.texts.length > 1 && !flag.repeatable)
      return configInvalid(source, given.texts[1] ?? '', `given ${given.texts.length} times; give it once`);
    const parsed: unknown[] = [];
    for (const text of given.texts) {
      const value = flag.parse(text);
      if (!value.ok) return configInvalid(source, text, value.error.message);
      parsed.push(value.value);
    }
    return ok({ value: flag.repeatable ? parsed : parsed[0], source });
  }
  const envName = [flag.env, flag.deprecated?.env].find((name) => name !== undefined && env[name] !== undefined);
  const envText = envName === undefined ? undefined : env[envName];
  if (envName !== undefined && envText !== undefined) {
    const value = flag.parse(envText);
    if (!value.ok) return configInvalid(envName, envText, value.error.message);
    return ok({ value: flag.repeatable ? [value.value] : value.value, source: envName });
  }
  return ok(flag.default === undefined ? undefined : { value: flag.default });
}

function strictTokens(command: CommandName, argv: readonly string[], flags: readonly FlagDef[]): ConfigResult<Token[]> {
  type Option = { type: 'boolean' | 'string'; multiple: true; short?: string };
  const options: Record<string, Option> = {};
  for (const flag of flags) {
    const type = flag.kind === 'switch' ? 'boolean' : 'string';
    options[flag.name] = { type, multiple: true, ...(flag.short === undefined ? {} : { short: flag.short }) };
    if (flag.deprecated) options[flag.deprecated.name] = { type, multiple: true };
  }
  try {
    const { tokens } = strictParseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: false,
      tokens: true,
    });
    return ok(tokens);
  } catch (error) {
    return describeArgvError(command, argv, flags, error);
  }
}

/**
 * parseArgs' own messages repeat the offending text verbatim; this says the same in our words,
 * with the text truncated and escaped.
 */
function describeArgvError(
  command: CommandName,
  argv: readonly string[],
  flags: readonly FlagDef[],
  error: unknown,
): ConfigResult<never> {
  const byName = new Map(
    flags.flatMap((flag) => [
      [flag.name, flag] as const,
      ...(flag.deprecated ? [[flag.deprecated.name, flag] as const] : []),
    ]),
  );
  const byShort = new Map(flags.flatMap((flag) => (flag.short === undefined ? [] : [[flag.short, flag] as const])));
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (arg === '--' || !arg.startsWith('-') || arg === '-')
      return configInvalid(
        'argument',
        arg === '--' ? (argv[index + 1] ?? '') : arg,
        `unexpected argument (interlock ${command} takes flags only)`,
      );
    const equals = arg.indexOf('=');
    const short = /^-[^-]$/.test(arg) ? byShort.get(arg.slice(1)) : undefined;
    const name = short?.name ?? (arg.startsWith('--') ? arg.slice(2, equals < 0 ? undefined : equals) : arg);
    const flag = short ?? (arg.startsWith('--') ? byName.get(name) : undefined);
    // Named as typed: `---mesh` is not `--mesh`, and saying so would send the operator in circles.
    if (!flag)
      return configInvalid(
        echoValue(equals < 0 ? arg : arg.slice(0, equals)),
        undefined,
        `unknown flag for interlock ${command}${closestFlag(name, flags)}`,
      );
    if (flag.kind === 'switch' && equals >= 0)
      return configInvalid(`--${name}`, arg.slice(equals + 1), 'is a switch and takes no value');
    if (flag.kind === 'switch' || equals >= 0) continue;
    const next = argv[index + 1];
    if (next === undefined) return configInvalid(`--${name}`, undefined, 'needs a value');
    if (next.startsWith('-') && next !== '-')
      return configInvalid(`--${name}`, next, `needs a value; a value starting with "-" is written --${name}=VALUE`);
    index++;
  }
  return configInvalid('argv', error instanceof Error ? error.message : String(error), 'not understood');
}

/** `; did you mean --timeout?` for a typo one or two edits away from a flag of this command. */
function closestFlag(typed: string, flags: readonly FlagDef[]): string {
  const best = closestName(
    typed.replace(/^-+/, ''),
    flags.map((flag) => flag.name),
  );
  return best ? `; did you mean --${best}?` : '';
}
