import type { CommandName, FlagDef } from '../config/flag-def.js';
import type { LoadRtNetlink } from '../netlink/read-pod-network.js';
import type { InspectRules } from '../validate/rules-port.js';
import type { ProveInterception } from '../validate/run-validate.js';
import type { CommandOutcome } from './command-outcome.js';

/** Adapters a launcher may substitute (the start-up snapshot loads netlink its own way). */
export interface CliAdapters {
  readonly loadRtNetlink?: LoadRtNetlink;
  readonly inspectRules?: InspectRules;
  readonly proveInterception?: ProveInterception;
}

/** What the composition root hands a command as it runs it. */
export interface CommandContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborts on SIGTERM or SIGINT; asked for only by a command that runs until it is stopped. */
  readonly stopSignal: () => AbortSignal;
  /** The launcher's adapters, and the rules engine loaded on first use. */
  readonly adapters: CliAdapters & { readonly inspectRules: InspectRules };
}

/** A command's run function, as its row in the command table loads it. */
export type CommandRunner = (
  argv: readonly string[],
  context: CommandContext,
) => Promise<CommandOutcome> | CommandOutcome;

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
  /**
   * Imports the command's `run.ts` only when it runs: help, completion and the docs read this
   * table and load no runner. A dynamic import of a module listed in scripts/build-snapshot.mjs's
   * `onDemand`, so it stays out of the start-up blob.
   */
  readonly load: () => Promise<CommandRunner>;
}
