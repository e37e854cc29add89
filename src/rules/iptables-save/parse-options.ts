import type { Family } from '../../addr/ip.js';
import type { Backend } from '../model.js';
import type { TermBudget } from '../limit-checks.js';

/** What a caller says about one iptables-save dump; the dump's reader and its rule-line reader both take it. */
export interface ParseOptions {
  readonly backend: Exclude<Backend, 'nftables'>;
  readonly family: Family;
  /** Names the dump in errors (a file name or the command that printed it). */
  readonly source: string;
  /** Shared by the dumps of one analysis; a dump parsed alone gets its own. */
  readonly budget?: TermBudget;
}
