import type { CommandName, FlagDef } from '../config/flag-def.js';

/** A variable a command reads that no flag stands for (POD_NAME from the downward API). */
export interface EnvironmentVariable {
  readonly name: string;
  readonly help: string;
}

/**
 * One command, declared once: its help, docs/cli.md and the shell completions are generated from
 * this and from its flags (src/cli/command-table.ts lists them all).
 */
export interface CommandSpec {
  readonly name: CommandName;
  /** What follows `interlock NAME` on the usage line: `--mesh linkerd|istio|istio-ambient|generic [flags]`. */
  readonly usage: string;
  /** One line, also shown by `interlock help`. */
  readonly summary: string;
  readonly description: readonly string[];
  readonly flags: readonly FlagDef[];
  /** Flags of another command this one passes on (manifest --node-agent: node's), for completion only. */
  readonly passedOn?: readonly FlagDef[];
  /** Arguments that are not flags (`completion SHELL`): their choices, for completion. */
  readonly positional?: readonly string[];
  readonly environment?: readonly EnvironmentVariable[];
  /** Exit code (or codes, `95/126/97`) and its meaning for this command. */
  readonly exitCodes: ReadonlyArray<readonly [string, string]>;
}
