import type { Chain, Table } from '../rules/model.js';

/**
 * The chains of a table from which a jump/goto cycle can be reached. The kernel refuses to load
 * such a table (ELOOP), so a dump holding one was edited or is hostile: a trace entering one of
 * these chains stops at once with "unknown: loop" instead of walking it until a limit.
 */
export function loopingChains(table: Table): Map<Chain, string> {
  const targets = new Map<Chain, Chain[]>();
  for (const chain of table.chains.values()) {
    const next: Chain[] = [];
    for (const rule of chain.rules) {
      for (const action of rule.actions) {
        if (action.kind !== 'jump' && action.kind !== 'goto') continue;
        const target = table.chains.get(action.chain);
        if (target) next.push(target);
      }
    }
    targets.set(chain, next);
  }
  // Peel chains whose every target is already known loop-free; what remains reaches a cycle.
  const remaining = new Set(table.chains.values());
  for (let peeled = true; peeled;) {
    peeled = false;
    for (const chain of remaining) {
      if ((targets.get(chain) ?? []).every((target) => !remaining.has(target))) {
        remaining.delete(chain);
        peeled = true;
      }
    }
  }
  const looping = new Map<Chain, string>();
  for (const chain of remaining) looping.set(chain, cycleFrom(chain, targets, remaining));
  return looping;
}

/** Names one cycle reachable from `start`, e.g. `A -> B -> A`, for the report. */
function cycleFrom(start: Chain, targets: ReadonlyMap<Chain, Chain[]>, remaining: ReadonlySet<Chain>): string {
  const seen: Chain[] = [];
  let chain: Chain | undefined = start;
  while (chain && !seen.includes(chain)) {
    seen.push(chain);
    chain = (targets.get(chain) ?? []).find((target) => remaining.has(target));
  }
  const from = chain ? seen.indexOf(chain) : 0;
  return [...seen.slice(from), chain ?? start].map((c) => c.name).join(' -> ');
}
