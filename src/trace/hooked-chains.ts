import type { Chain, Provenance, Ruleset, Table } from '../rules/model.js';
import type { TraceFrame } from './match-constraint.js';

export interface HookedChain {
  readonly table: Table;
  readonly chain: Chain;
  readonly priority: number;
  readonly type: 'nat' | 'filter' | 'route';
  readonly policy: 'accept' | 'drop';
}

/** Base chains on the frame's hook, in the order the kernel runs them (stable on equal priority). */
export function hookedChains(ruleset: Ruleset, frame: TraceFrame): HookedChain[] {
  const hooked: HookedChain[] = [];
  for (const table of ruleset.tables) {
    if (table.family !== 'inet' && table.family !== frame.family) continue;
    for (const chain of table.chains.values()) {
      if (!chain.base || chain.base.hook !== frame.hook) continue;
      hooked.push({ table, chain, priority: chain.base.priority, type: chain.base.type, policy: chain.base.policy });
    }
  }
  return hooked.sort((a, b) => a.priority - b.priority);
}

export function policyProvenance(hooked: HookedChain): Provenance {
  return {
    backend: hooked.table.backend,
    family: hooked.table.family,
    table: hooked.table.name,
    chain: hooked.chain.name,
    position: 0,
    text: `policy ${hooked.policy.toUpperCase()} of ${hooked.chain.name}`,
  };
}

export function where(at: Provenance): string {
  return `${at.backend} ${at.table} ${at.chain}${at.position > 0 ? ` #${at.position}` : ''}`;
}
