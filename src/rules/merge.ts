import type { Family } from '../addr/ip.js';
import type { Backend, Ruleset, Table } from './model.js';

/** One dump: what a tool printed for one backend (and, for iptables, one family). */
export interface RuleSource {
  readonly backend: Backend;
  /** iptables dumps are per family; `nft -j list ruleset` covers every family. */
  readonly family?: Family;
  readonly tables: readonly Table[];
}

export interface MergedRules {
  readonly ruleset: Ruleset;
  /** Backends holding at least one rule, in the order read. */
  readonly backendsWithRules: readonly Backend[];
  /** Rules in iptables-legacy and in nf_tables at once: both run, which is rarely what a mesh meant. */
  readonly splitAcrossBackends: boolean;
  readonly notes: readonly string[];
}

const XTABLES_NAMES = new Set(['raw', 'mangle', 'nat', 'filter', 'security']);

/**
 * Puts every backend's tables into one ruleset the tracer runs as the kernel would: all of them.
 * iptables-nft's tables live in nf_tables, so `nft -j list ruleset` lists them again, without
 * the xtables extensions it cannot decode; when the iptables-nft-save view of that family was
 * read, the nft copy is dropped so the same rules are not run twice.
 */
export function mergeRuleSources(sources: readonly RuleSource[]): MergedRules {
  const notes: string[] = [];
  const iptablesNftTables = new Set<string>();
  for (const source of sources) {
    if (source.backend !== 'iptables-nft') continue;
    for (const table of source.tables) iptablesNftTables.add(`${table.family}/${table.name}`);
  }
  const tables: Table[] = [];
  for (const source of sources) {
    for (const table of source.tables) {
      if (
        source.backend === 'nftables' &&
        table.family !== 'inet' &&
        XTABLES_NAMES.has(table.name) &&
        iptablesNftTables.has(`${table.family}/${table.name}`)
      ) {
        notes.push(
          `nft table ${table.family === 'ipv4' ? 'ip' : 'ip6'} ${table.name} is iptables-nft's; read through iptables-nft-save instead`,
        );
        continue;
      }
      tables.push(table);
    }
  }
  const backendsWithRules: Backend[] = [];
  for (const table of tables) {
    const hasRules = [...table.chains.values()].some((chain) => chain.rules.length > 0);
    if (hasRules && !backendsWithRules.includes(table.backend)) backendsWithRules.push(table.backend);
  }
  const splitAcrossBackends =
    backendsWithRules.includes('iptables-legacy') && backendsWithRules.some((backend) => backend !== 'iptables-legacy');
  if (splitAcrossBackends) {
    notes.push(
      `rules are split across backends (${backendsWithRules.join(', ')}): the kernel runs all of them; the trace follows each in hook-priority order`,
    );
  }
  return { ruleset: { tables }, backendsWithRules, splitAcrossBackends, notes };
}
