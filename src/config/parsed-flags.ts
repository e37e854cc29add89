import type { CommandName, DefaultedFlag, FlagDef } from './flag-def.js';

/** What a command line said, every value already parsed by its FlagDef. */
export interface ParsedFlags {
  readonly command: CommandName;
  /** Parsed values by flag name; a repeatable flag holds the array of its values. */
  readonly values: ReadonlyMap<string, unknown>;
  /** Where each value came from (`--mesh` or `INTERLOCK_MESH`); absent for a default. */
  readonly sources: ReadonlyMap<string, string>;
}

/**
 * The flag's value: argv, else its environment variable, else its default. Typed by the
 * declaration: a flag with a default always has a value; one without may be unset (undefined).
 */
export function flagValue<T>(parsed: ParsedFlags, flag: DefaultedFlag<T>): T;
export function flagValue<T>(parsed: ParsedFlags, flag: FlagDef<T>): T | undefined;
export function flagValue<T>(parsed: ParsedFlags, flag: FlagDef<T>): T | undefined {
  // The parser fills defaults in; falling back here keeps the type's promise for a map built
  // elsewhere (a test, a drop-in's translated argv) without a second copy of any default.
  return (parsed.values.get(flag.name) as T | undefined) ?? flag.default;
}

/** Every value of a repeatable flag, in command-line order. */
export function flagValues<T>(parsed: ParsedFlags, flag: FlagDef<T>): readonly T[] {
  return (parsed.values.get(flag.name) as readonly T[] | undefined) ?? [];
}

/** `--mesh` or `INTERLOCK_MESH` when the operator gave it; undefined when it is the default. */
export function flagSource(parsed: ParsedFlags, flag: FlagDef): string | undefined {
  return parsed.sources.get(flag.name);
}

/**
 * The value only when the operator gave it (argv or its variable): for a flag whose default
 * belongs to another command (`--mesh`'s generic is validate's), never that default.
 */
export function givenValue<T>(parsed: ParsedFlags, flag: FlagDef<T>): T | undefined {
  return flagSource(parsed, flag) === undefined ? undefined : (parsed.values.get(flag.name) as T | undefined);
}

/** The environment variables that gave a flag its value, in the order they were read. */
export function environmentSources(parsed: ParsedFlags): readonly string[] {
  return [...parsed.sources.values()].filter((source) => !source.startsWith('-'));
}
