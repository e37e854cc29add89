import type { Chain, Provenance, Ruleset, Table } from '../rules/model.js';
import { conntrackStage, NAT_CORE_PRIORITY, runsAt, type ConntrackStage } from './conntrack.js';
import type { TraceFrame } from './match-constraint.js';

export interface HookedChain {
  readonly table: Table;
  readonly chain: Chain;
  readonly priority: number;
  readonly type: 'nat' | 'filter' | 'route';
  readonly policy: 'accept' | 'drop';
  /** Where the chain runs: its priority, or the NAT core's for a nat chain. */
  readonly runsAt: number;
  /** Whether the packet has met conntrack when the chain runs. */
  readonly stage: ConntrackStage;
  /**
   * A chain that is not nat at the NAT core's very priority while nat chains exist: which runs
   * first is the order of registration, which no dump shows.
   */
  readonly tiesNatCore: boolean;
}

/**
 * Base chains on the frame's hook, in the order the kernel runs them: by where they run (nat
 * chains inside the NAT core), nat chains among themselves by their own priority, stable on ties.
 */
export function hookedChains(ruleset: Ruleset, frame: TraceFrame): HookedChain[] {
  const hooked: HookedChain[] = [];
  for (const table of ruleset.tables) {
    if (table.family !== 'inet' && table.family !== frame.family) continue;
    for (const chain of table.chains.values()) {
      if (!chain.base || chain.base.hook !== frame.hook) continue;
      const { priority, type, policy } = chain.base;
      const at = runsAt(type, priority);
      hooked.push({ table, chain, priority, type, policy, runsAt: at, stage: conntrackStage(at), tiesNatCore: false });
    }
  }
  const nat = hooked.some((chain) => chain.type === 'nat');
  return hooked
    .map((chain) =>
      nat && chain.type !== 'nat' && chain.priority === NAT_CORE_PRIORITY ? { ...chain, tiesNatCore: true } : chain,
    )
    .sort((a, b) => a.runsAt - b.runsAt || a.priority - b.priority);
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
