import type { Family } from '../../addr/ip.js';
import type { Dump } from '../dump.js';
import { bytesText, MAX_LIVE_DUMP_BYTES, MAX_NFT_JSON_BYTES, READER_ADDRESS_SPACE_BYTES } from '../limits.js';
import type { Backend } from '../model.js';
import type { Result } from '../../reason/result.js';

/**
 * Pure classification of what the reading adapter saw: the legacy table-names file and the
 * result of one save/list command. No I/O here, so every branch is unit-tested.
 */

/** What one read produced: the dump, a tool that is not installed, or a read that failed. */
export type ReadOutcome =
  | { readonly kind: 'read'; readonly dump: Dump }
  | { readonly kind: 'absent'; readonly command: string }
  | { readonly kind: 'skipped'; readonly command: string; readonly why: string }
  | { readonly kind: 'unreadable'; readonly command: string; readonly why: string }
  /**
   * The tool printed more than a pod's rules may take, or ran out of its memory limit listing
   * them: refused unread (RulesTooLarge), never half-read. `table`: the table it was printing.
   */
  | {
      readonly kind: 'too-large';
      readonly command: string;
      readonly backend: Backend;
      readonly family?: Family;
      readonly table?: string;
      readonly why: string;
    }
  /**
   * The legacy backend exists (x_tables is loaded) but this process may not list its tables:
   * /proc/net/ip_tables_names is root-only. Not "no legacy rules": legacy was not looked at.
   */
  | {
      readonly kind: 'not-listable';
      readonly command: string;
      readonly family: Family;
      readonly path: string;
      readonly uid: number | undefined;
      /** The error code reading `path`, e.g. EACCES. */
      readonly why: string;
    };

export function legacyNamesPath(family: Family): string {
  return family === 'ipv4' ? '/proc/net/ip_tables_names' : '/proc/net/ip6_tables_names';
}

/** What reading /proc/net/ip{,6}_tables_names said about the legacy backend. */
type LegacyListing =
  | { readonly kind: 'tables'; readonly names: readonly string[] }
  /** No legacy rules can exist (x_tables not loaded) or none are registered in this namespace. */
  | { readonly kind: 'none'; readonly why: string }
  /** The kernel has legacy tables support but this process cannot see which tables exist. */
  | { readonly kind: 'not-listable'; readonly why: string };

/** The table-names file's text, or a failure whose reason is the error code (ENOENT, EACCES...). */
export type NamesRead = Result<string, string>;

/**
 * ENOENT means x_tables is not loaded: no legacy rules are possible. Any other error (EACCES and
 * EPERM for a non-root validator with CAP_NET_ADMIN, the normal case) means the legacy backend
 * was not listed, which must never be read as "empty".
 */
export function legacyListingOf(family: Family, read: NamesRead): LegacyListing {
  const path = legacyNamesPath(family);
  if (!read.ok) {
    if (read.error.reason === 'ENOENT') return { kind: 'none', why: `no ${path} (x_tables not loaded)` };
    return { kind: 'not-listable', why: read.error.reason };
  }
  const names = read.value
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (names.length === 0) return { kind: 'none', why: `no legacy ${family} tables in /proc/net` };
  return { kind: 'tables', names };
}

/** What running one save/list tool gave, reduced to what the classification needs. */
export interface ToolRun {
  /** `ENOENT` when the tool is not installed. */
  readonly code?: string;
  readonly timedOut: boolean;
  /** The tool printed more than its cap and was stopped: its output is not kept. */
  readonly overflowed?: boolean;
  readonly exitCode: number | undefined;
  /** The signal that ended the tool, when one did (the kernel's, a limit's or ours). */
  readonly signal?: string;
  readonly stdout: string;
  /** The bytes the tool printed before it ended or was stopped (`stdout` may hold none of them). */
  readonly stdoutBytes?: number;
  /** The table the tool was printing last (iptables-save's `*nat`, nft JSON's `"table"`). */
  readonly table?: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

interface CommandSpec {
  readonly label: string;
  readonly backend: Backend;
  readonly family?: Family;
}

/**
 * iptables-save reports a listing failure on stderr and may still exit 0 with nothing on stdout:
 * that is a failed read, never an empty ruleset. Warnings such as iptables-nft-save's "legacy
 * tables present" are not failures.
 */
const SAVE_FAILURE = /Failed to list table names|Permission denied|you must be root|Cannot initialize/i;

/** The cap on what one tool may print in a pod: nft's JSON is parsed into a tree, so it gets its own. */
export function outputCapOf(backend: Backend): number {
  return backend === 'nftables' ? MAX_NFT_JSON_BYTES : MAX_LIVE_DUMP_BYTES;
}

/**
 * What a tool prints when it cannot allocate under its address-space limit: nft's `utils.c:38:
 * Memory allocation failure`, or its JSON writer's assertion that jansson returned an object
 * (`json.c:572: payload_expr_json: Assertion \`__out' failed.`, then SIGABRT).
 */
const OUT_OF_MEMORY =
  /memory allocation failure|cannot allocate memory|out of memory|json\.c:\d+: \w+: Assertion `__out' failed/i;

/** Over the output cap, or out of memory listing the rules: too large, naming the table and the size. */
function tooLarge(command: CommandSpec, run: ToolRun): ReadOutcome | undefined {
  const oom = run.exitCode !== 0 && OUT_OF_MEMORY.test(run.stderr);
  if (!run.overflowed && !oom) return undefined;
  const table = run.table === undefined ? 'its rules' : `the ${run.table} table`;
  const why = run.overflowed
    ? `printed more than ${bytesText(outputCapOf(command.backend))} (stopped in ${table}), the limit for one pod's rules; a pod's NAT rules are a few kilobytes`
    : `ran out of its ${bytesText(READER_ADDRESS_SPACE_BYTES)} memory limit listing ${table} after ${String(run.stdoutBytes ?? 0)} bytes (${firstLine(run.stderr)}); a pod's NAT rules list in a few MiB`;
  return {
    kind: 'too-large',
    command: command.label,
    backend: command.backend,
    ...(command.family ? { family: command.family } : {}),
    ...(run.table !== undefined ? { table: run.table } : {}),
    why,
  };
}

const firstLine = (text: string): string => text.trim().split('\n')[0] ?? '';

/** `exit 1`, or `killed by SIGSEGV` when a signal ended the tool. */
const endedBy = (run: ToolRun): string =>
  run.exitCode === undefined && run.signal !== undefined ? `killed by ${run.signal}` : `exit ${String(run.exitCode)}`;

/** A read cut short (a timeout, too much output) is reported as such and never parsed. */
export function classifyToolRun(command: CommandSpec, run: ToolRun): ReadOutcome {
  const label = command.label;
  if (run.code === 'ENOENT') return { kind: 'absent', command: label };
  const partial = 'the partial output was not analysed';
  if (run.timedOut)
    return {
      kind: 'unreadable',
      command: label,
      why: `timed out after ${Math.round(run.elapsedMs)} ms having printed ${run.stdoutBytes ?? Buffer.byteLength(run.stdout, 'utf8')} bytes; ${partial}`,
    };
  const large = tooLarge(command, run);
  if (large) return large;
  const stderrLine = firstFailureLine(run.stderr);
  if (run.exitCode !== 0) {
    const first = stderrLine ?? firstLine(run.stderr);
    return { kind: 'unreadable', command: label, why: `${endedBy(run)}${first ? `: ${first}` : ''}` };
  }
  if (command.backend !== 'nftables' && stderrLine !== undefined) {
    return { kind: 'unreadable', command: label, why: `exit 0 but stderr says: ${stderrLine}` };
  }
  const dump: Dump = {
    backend: command.backend,
    ...(command.family ? { family: command.family } : {}),
    source: label,
    text: run.stdout,
  };
  return { kind: 'read', dump };
}

function firstFailureLine(stderr: string): string | undefined {
  return stderr
    .split('\n')
    .map((line) => line.trim())
    .find((line) => SAVE_FAILURE.test(line));
}
