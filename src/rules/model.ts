import type { Cidr } from '../addr/cidr.js';
import type { Family, IpAddress } from '../addr/ip.js';
import type { PortSet } from '../addr/port-set.js';
import type { Reason } from '../reason/reason.js';
import type { Failure } from '../reason/result.js';

/**
 * The typed model every backend is read into. iptables (either backend) and native nftables end up
 * as the same tables, chains and rules so one tracer answers for all of them.
 */

/** Where a ruleset was read from. iptables-nft and native nftables share the kernel's nf_tables. */
export type Backend = 'iptables-legacy' | 'iptables-nft' | 'nftables';

/** iptables tables are per family; nftables `inet` tables see both families. */
export type TableFamily = Family | 'inet';

export type Hook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';

/** nat chains take part in the kernel's NAT core (first binding wins); the rest are filter-like. */
export type ChainType = 'nat' | 'filter' | 'route';

/** Where a rule came from: enough to point an operator at it. */
export interface Provenance {
  readonly backend: Backend;
  readonly family: TableFamily;
  readonly table: string;
  readonly chain: string;
  /** 1-based position in its chain, as `iptables -L --line-numbers` counts. */
  readonly position: number;
  /** The rule as the tool printed it (iptables-save line), or rendered from the nft JSON. */
  readonly text: string;
  /** Line in the dump (iptables-save) or index in the `nftables` array (JSON), 1-based. */
  readonly line?: number;
}

export interface IdRange {
  readonly from: number;
  readonly to: number;
}

export type CtState = 'new' | 'established' | 'related' | 'invalid' | 'untracked';

/** A packet property test. `negated` is iptables' `!` / nft's `!=`. */
export type Match =
  | { readonly kind: 'protocol'; readonly protocols: readonly string[]; readonly negated: boolean }
  | { readonly kind: 'l3'; readonly family: Family }
  | { readonly kind: 'port'; readonly field: 'sport' | 'dport'; readonly ports: PortSet; readonly negated: boolean }
  | {
      readonly kind: 'address';
      readonly field: 'saddr' | 'daddr';
      readonly family: Family;
      readonly cidrs: readonly Cidr[];
      readonly negated: boolean;
    }
  | {
      readonly kind: 'interface';
      readonly field: 'iif' | 'oif';
      readonly names: readonly string[];
      readonly negated: boolean;
    }
  | {
      readonly kind: 'owner';
      readonly field: 'uid' | 'gid';
      readonly ids: readonly IdRange[];
      readonly negated: boolean;
    }
  | {
      readonly kind: 'mark';
      readonly field: 'mark' | 'ctmark';
      readonly value: number;
      readonly mask: number;
      readonly negated: boolean;
    }
  | { readonly kind: 'ctstate'; readonly states: readonly CtState[]; readonly negated: boolean }
  /** Always true; kept so an operator sees the comment the mesh wrote (Linkerd names every rule). */
  | { readonly kind: 'comment'; readonly text: string }
  /** Anything the tracer cannot evaluate; it makes a decision "unknown", never a pass. */
  | { readonly kind: 'unknown'; readonly text: string };

/** What a rule does when it matches. A rule has one or more (nft statements run in order). */
export type Action =
  | { readonly kind: 'jump'; readonly chain: string }
  | { readonly kind: 'goto'; readonly chain: string }
  | { readonly kind: 'return' }
  | { readonly kind: 'accept' }
  | { readonly kind: 'drop' }
  /** REDIRECT to a local port; undefined keeps the packet's own destination port. */
  | { readonly kind: 'redirect'; readonly port: number | undefined }
  | { readonly kind: 'dnat'; readonly address: IpAddress | undefined; readonly port: number | undefined }
  /** iptables' TPROXY target ends the table; nft's tproxy statement does not. */
  | { readonly kind: 'tproxy'; readonly port: number; readonly terminal: boolean }
  /** mark = (mark & ~mask) ^ value, iptables' --set-xmark; nft `meta mark set V` has mask all ones. */
  | { readonly kind: 'set-mark'; readonly value: number; readonly mask: number }
  | { readonly kind: 'save-mark' }
  | { readonly kind: 'restore-mark' }
  /**
   * NOTRACK, `CT --notrack`, nft `notrack`: before conntrack (priority below -200) the packet stays
   * untracked and the NAT core never sees it; after conntrack it does nothing.
   */
  | { readonly kind: 'notrack' }
  /**
   * Statements a kernel run shows never change where a packet goes (docs/rules.md lists them):
   * counters, logs, traces, conntrack zones, helpers and event masks.
   */
  | { readonly kind: 'continue'; readonly what: string }
  | { readonly kind: 'unknown'; readonly text: string };

export interface Rule {
  readonly matches: readonly Match[];
  readonly actions: readonly Action[];
  readonly provenance: Provenance;
}

export interface Chain {
  readonly name: string;
  /** Base chains are hooked into the stack; user chains are only reached by jump/goto. */
  readonly base?: {
    readonly hook: Hook;
    readonly priority: number;
    readonly type: ChainType;
    readonly policy: 'accept' | 'drop';
  };
  readonly rules: readonly Rule[];
}

export interface Table {
  readonly backend: Backend;
  readonly family: TableFamily;
  readonly name: string;
  readonly chains: ReadonlyMap<string, Chain>;
}

export interface Ruleset {
  readonly tables: readonly Table[];
}

/** Why a dump could not be read as rules: names the source and line. */
export interface ParseError extends Failure<ParseFailureReason> {
  readonly kind: 'parse-error';
  readonly source: string;
  readonly line: number;
}

/** RulesTooLarge: the dump is over a cap of src/rules/limits.ts; RulesUnparseable: anything else. */
export type ParseFailureReason = Extract<Reason, 'RulesUnparseable' | 'RulesTooLarge'>;

/** The parsers' answer: the shape of `Result`, with the tables under `tables`. */
export type ParseResult = { readonly ok: true; readonly tables: readonly Table[] } | ParseFailed;

export interface ParseFailed {
  readonly ok: false;
  readonly error: ParseError;
}

function parseError(
  source: string,
  line: number,
  message: string,
  reason: ParseFailureReason = 'RulesUnparseable',
): ParseError {
  return { kind: 'parse-error', reason, source, line, message };
}

export function parseFailure(
  source: string,
  line: number,
  message: string,
  reason: ParseFailureReason = 'RulesUnparseable',
): ParseFailed {
  return { ok: false, error: parseError(source, line, message, reason) };
}
