import type { Family } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { SpaceCheckResult } from '../expect/space-check.js';
import { verifyRuleset } from '../expect/verify.js';
import { parseIptablesSave } from '../rules/iptables-save/parse-iptables-save.js';
import { TermBudget } from '../rules/limit-checks.js';
import { mergeRuleSources, type MergedRules, type RuleSource } from '../rules/merge.js';
import type { Dump } from '../rules/dump.js';
import type { ParseError, Table } from '../rules/model.js';
import { parseNftJson } from '../rules/nft-json/parse-nft-json.js';

export type Analysis =
  | { readonly kind: 'parse-error'; readonly error: ParseError }
  | {
      readonly kind: 'checked';
      readonly merged: MergedRules;
      readonly families: readonly Family[];
      readonly check: SpaceCheckResult;
    };

export type { Dump } from '../rules/dump.js';

export interface AnalysisOptions {
  /** Families to ask about; `auto` takes those the rules cover. */
  readonly families: readonly Family[] | 'auto';
  /** Work units (rule visits, regions split off) the analysis may spend (default ANALYSIS_BUDGET); past it, "unknown". */
  readonly workLimit?: number;
  /** When the analysis must have answered, on `now`'s clock; past it, "unknown". */
  readonly deadline?: { readonly at: number; readonly now: () => number };
}

/** Every dump parsed and the backends merged, once, whatever number of expectations it is checked against. */
export type Parsed =
  | { readonly kind: 'parse-error'; readonly error: ParseError }
  | { readonly kind: 'parsed'; readonly merged: MergedRules };

/** Parse every dump and merge the backends, within one memory budget for them all. Pure. */
export function parseDumps(dumps: readonly Dump[]): Parsed {
  const sources: RuleSource[] = [];
  // One budget for every dump: the caps bound the whole model, not each dump's share of it.
  const budget = TermBudget.forTexts(dumps.map((dump) => dump.text));
  for (const dump of dumps) {
    const parsed =
      dump.backend === 'nftables'
        ? parseNftJson(dump.text, dump.source, budget)
        : parseIptablesSave(dump.text, {
            backend: dump.backend,
            family: dump.family ?? 'ipv4',
            source: dump.source,
            budget,
          });
    if (!parsed.ok) return { kind: 'parse-error', error: parsed.error };
    sources.push({ backend: dump.backend, ...(dump.family ? { family: dump.family } : {}), tables: parsed.tables });
  }
  return { kind: 'parsed', merged: mergeRuleSources(sources) };
}

/** One expectation over every packet of rules already parsed. Pure. */
export function verifyParsed(
  spec: InterceptionSpec,
  merged: MergedRules,
  options: AnalysisOptions,
): Extract<Analysis, { kind: 'checked' }> {
  const families = options.families === 'auto' ? familiesCovered(merged.ruleset.tables) : options.families;
  return {
    kind: 'checked',
    merged,
    families,
    check: verifyRuleset(merged.ruleset, spec, families, options.workLimit, options.deadline),
  };
}

/** Parse every dump, merge the backends, verify every expectation over every packet. Pure. */
export function analyzeDumps(spec: InterceptionSpec, dumps: readonly Dump[], options: AnalysisOptions): Analysis {
  const parsed = parseDumps(dumps);
  return parsed.kind === 'parse-error' ? parsed : verifyParsed(spec, parsed.merged, options);
}

/**
 * The families a ruleset speaks for: iptables tables by their family, nft `inet` tables for both
 * (an inet chain is hooked for IPv4 and IPv6 alike, whatever addresses its rules name). With no
 * rules at all, IPv4 is still asked about, so an empty ruleset fails rather than passing vacuously.
 */
function familiesCovered(tables: readonly Table[]): Family[] {
  const found = new Set<Family>();
  for (const table of tables) {
    if (![...table.chains.values()].some((chain) => chain.rules.length > 0)) continue;
    if (table.family === 'inet') {
      found.add('ipv4');
      found.add('ipv6');
    } else {
      found.add(table.family);
    }
  }
  if (found.size === 0) found.add('ipv4');
  return (['ipv4', 'ipv6'] as const).filter((family) => found.has(family));
}
