import type { Family } from '../addr/ip.js';
import type { Backend } from './model.js';

/** One saved or freshly read dump, as text. */
export interface Dump {
  readonly backend: Backend;
  /** Required for iptables dumps (one family each); nft JSON covers every family. */
  readonly family?: Family;
  /** Names the dump in messages: a file path or the command. */
  readonly source: string;
  readonly text: string;
}
