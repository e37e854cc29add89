import type { Family } from '../../addr/ip.js';
import { READER_ADDRESS_SPACE_BYTES } from '../limits.js';
import type { Backend } from '../model.js';
import { legacyListingOf, legacyNamesPath, type NamesRead, type ReadOutcome } from './classify.js';

/** One save/list tool to run. */
export interface ReaderCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly backend: Backend;
  readonly family?: Family;
}

/**
 * What reads a pod's rules, wherever it runs (validate in its own namespace, the node agent's
 * re-check through nsenter): for each family its iptables-nft saver and, only where /proc lists
 * legacy tables, its legacy saver (never `-t nat`, which would create the legacy nat table); and
 * one nft listing of every table.
 */
export const NFT_READER: ReaderCommand = { file: 'nft', args: ['-j', 'list', 'ruleset'], backend: 'nftables' };

/**
 * Run before every reading tool, wherever it runs: its own address-space limit, so a listing too
 * large to build fails in the child (refused as too large) instead of filling the pod's cgroup.
 */
export const READER_LIMIT: readonly string[] = ['prlimit', `--as=${READER_ADDRESS_SPACE_BYTES}`, '--'];

/** The tool was not found by the wrapper that execs it (prlimit, setpriv, nsenter): not installed. */
const WRAPPER_NOT_FOUND = /^exit 127: (?:nsenter|setpriv|prlimit): failed to execute \S+: No such file/;

/**
 * A run the wrapper could not exec the tool for is the tool's absence, as ENOENT says without a
 * wrapper: one reading for validate's reader and the re-check's.
 */
export function absentWhenNotInstalled(outcome: ReadOutcome, label: string): ReadOutcome {
  return outcome.kind === 'unreadable' && WRAPPER_NOT_FOUND.test(outcome.why)
    ? { kind: 'absent', command: label }
    : outcome;
}

const savers = (family: Family): string => (family === 'ipv4' ? 'iptables' : 'ip6tables');

export const nftSaveReader = (family: Family): ReaderCommand => ({
  file: `${savers(family)}-nft-save`,
  args: [],
  backend: 'iptables-nft',
  family,
});

/**
 * The legacy saver of a family, from its /proc listing: the command to run when legacy tables are
 * listed, else the outcome without running it (`skipped` when none are, `not-listable` when /proc
 * could not be read: root-only, never taken as empty).
 */
export function legacyReader(family: Family, names: NamesRead): ReaderCommand | ReadOutcome {
  const listing = legacyListingOf(family, names);
  const command = `${savers(family)}-legacy-save`;
  if (listing.kind === 'tables') return { file: command, args: [], backend: 'iptables-legacy', family };
  if (listing.kind === 'none') return { kind: 'skipped', command, why: listing.why };
  return {
    kind: 'not-listable',
    command,
    family,
    path: legacyNamesPath(family),
    uid: process.getuid?.(),
    why: listing.why,
  };
}

/** A legacy step to run, as opposed to its outcome already known. */
export const isReaderCommand = (step: ReaderCommand | ReadOutcome): step is ReaderCommand => 'file' in step;
