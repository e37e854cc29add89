/**
 * How much rules text Interlock reads and parses, at most. A pod's NAT rules are a few dozen
 * lines (Istio's largest corpus case is under 100 rules); the caps leave three orders of
 * magnitude of room (a synthetic 100,000-rule nat table still parses) and keep the peak RSS of a
 * whole run under 256 MiB whatever the input; the analysis's deadline (the validator's --timeout)
 * and the young generation's cap (scripts/node-runtime-flags.json) keep a hostile table's run
 * under the 128 Mi limit the manifests print.
 *
 * Shared by every reader: the live readers stop a tool that prints more than MAX_DUMP_BYTES,
 * explain's file reads stop there too, and the parsers refuse more, so no layer holds more.
 */

/** The largest dump (one iptables-save output, or any file or tool output read as rules), in bytes. */
export const MAX_DUMP_BYTES = 16 * 1024 * 1024;

/**
 * The most one saver may print of a pod's live rules, in bytes (validate, the node agent's
 * re-check): a pod's NAT rules are a few kilobytes (the corpus's largest iptables-save is under
 * 8 KB), and a validator or the agent reads them inside a 128 MiB memory cgroup, children and page
 * cache included. More is refused unread as RulesTooLarge. Files given to `explain` keep
 * MAX_DUMP_BYTES.
 */
export const MAX_LIVE_DUMP_BYTES = 1024 * 1024;

/**
 * Each reading child's address space (`prlimit --as`). `nft -j` builds its whole listing in memory
 * before printing (166 MB of RSS for 20,000 rules, 2026-11-28, the 2-core build machine), so the
 * output cap bounds what Interlock reads, not what the child takes from the pod's cgroup: past
 * this the tool fails to allocate and its read is refused as too large, never the cgroup's OOM.
 * The tools list a few-hundred-rule mesh ruleset in under 16 MiB.
 */
export const READER_ADDRESS_SPACE_BYTES = 64 * 1024 * 1024;

/** The largest `nft -j list ruleset` document, in bytes: a parsed JSON tree takes ~10x its text. */
export const MAX_NFT_JSON_BYTES = 2 * 1024 * 1024;

/**
 * The memory one analysis may take for its rules, estimated as it parses: the text of every dump,
 * 160 bytes for each rule, match, action and list element (address, port, name, id) it builds,
 * and 12 bytes per byte of nft JSON (the parsed tree). Measured: a model costs 145-155 bytes per
 * such term. With the heap cap of scripts/node-runtime-flags.json it keeps the whole process under
 * 256 MiB; a 100,000-rule nat table (13 MB, 700,000
 * terms) fits.
 */
export const MAX_RULESET_BYTES = 128 * 1024 * 1024;

/** The estimate per rule, match, action and list element the parsers build. */
export const BYTES_PER_TERM = 160;

/** The estimate per byte of nft JSON text for the tree JSON.parse builds from it. */
export const JSON_TREE_BYTES_PER_BYTE = 12;

/** The deepest nesting of arrays and objects in nft JSON: its readers recurse. */
export const MAX_JSON_DEPTH = 64;

/** The longest iptables-save line: far beyond any rule iptables can print. */
export const MAX_LINE_CHARS = 64 * 1024;

/** `16 MiB`: a cap as an operator reads it. */
export function bytesText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
