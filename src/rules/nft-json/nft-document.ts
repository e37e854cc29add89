import type { TermBudget } from '../limit-checks.js';
import type { Chain, Hook, Rule, Table, TableFamily } from '../model.js';
import { parseExpressions } from './expressions.js';
import { isObject } from './json-values.js';

interface ChainDraft {
  readonly name: string;
  base: Chain['base'];
  readonly rules: Rule[];
}

interface TableDraft {
  readonly family: TableFamily;
  readonly name: string;
  readonly chains: Map<string, ChainDraft>;
}

interface DocumentProblem {
  readonly message: string;
  readonly reason?: 'RulesTooLarge';
}

const NAMED_PRIORITIES: Readonly<Record<string, number>> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
};
const HOOKS: readonly string[] = ['prerouting', 'input', 'forward', 'output', 'postrouting'];

/**
 * The tables, chains and rules of an `nftables` array, built in order. A second `table` or
 * `chain` object is nft's "add" of something that exists: it keeps every rule added so far (nft
 * 1.0.6 `-j -f` does so); a chain declared again with another hook, type or priority, or a
 * regular chain declared again as a base chain, is refused as nft refuses it; a new policy wins.
 */
export class NftDocument {
  private readonly drafts = new Map<string, TableDraft>();

  constructor(private readonly budget: TermBudget) {}

  add(item: unknown, position: number): DocumentProblem | undefined {
    if (!isObject(item)) return { message: 'element of "nftables" is not an object' };
    if (isObject(item['table'])) return this.addTable(item['table']);
    if (isObject(item['chain'])) return this.addChain(item['chain']);
    if (isObject(item['rule'])) return this.addRule(item['rule'], position);
    return undefined;
  }

  tables(): Table[] {
    return [...this.drafts.values()].map((draft) => ({
      backend: 'nftables',
      family: draft.family,
      name: draft.name,
      chains: new Map(
        [...draft.chains].map(([name, chain]): [string, Chain] => [
          name,
          { name, ...(chain.base ? { base: chain.base } : {}), rules: chain.rules },
        ]),
      ),
    }));
  }

  private addTable(table: Record<string, unknown>): DocumentProblem | undefined {
    const family = tableFamily(table['family']);
    if (typeof table['name'] !== 'string') return { message: 'table without a name' };
    if (family === undefined) return undefined;
    const id = tableKey(table['family'], table['name']);
    if (!this.drafts.has(id)) this.drafts.set(id, { family, name: table['name'], chains: new Map() });
    return undefined;
  }

  private addChain(chain: Record<string, unknown>): DocumentProblem | undefined {
    if (tableFamily(chain['family']) === undefined) return undefined;
    const table = this.drafts.get(tableKey(chain['family'], chain['table']));
    const name = chain['name'];
    if (!table || typeof name !== 'string') return { message: 'chain outside a known table or without a name' };
    const base = baseOf(chain);
    if (base === 'invalid') return { message: `chain ${name} has a hook this reader does not understand` };
    const existing = table.chains.get(name);
    if (!existing) {
      table.chains.set(name, { name, base, rules: [] });
      return undefined;
    }
    if (base === undefined) return undefined;
    if (!existing.base)
      return {
        message: `chain ${name} was declared as a regular chain and is declared again as a base chain (nft refuses this)`,
      };
    const { hook, type, priority } = existing.base;
    if (base.hook !== hook || base.type !== type || base.priority !== priority)
      return { message: `chain ${name} is declared again with a different hook, type or priority (nft refuses this)` };
    existing.base = base;
    return undefined;
  }

  private addRule(rule: Record<string, unknown>, position: number): DocumentProblem | undefined {
    if (tableFamily(rule['family']) === undefined) return undefined;
    const table = this.drafts.get(tableKey(rule['family'], rule['table']));
    const chain = typeof rule['chain'] === 'string' ? table?.chains.get(rule['chain']) : undefined;
    if (!table || !chain) return { message: 'rule for a chain that was not listed before it' };
    const terms = parseExpressions(Array.isArray(rule['expr']) ? (rule['expr'] as unknown[]) : [], table.family);
    if (!this.budget.spendRule(terms)) return { message: this.budget.exceeded(), reason: 'RulesTooLarge' };
    const provenance = {
      backend: 'nftables' as const,
      family: table.family,
      table: table.name,
      chain: chain.name,
      position: chain.rules.length + 1,
      text: terms.text,
      line: position,
    };
    chain.rules.push({ matches: terms.matches, actions: terms.actions, provenance });
    return undefined;
  }
}

function tableKey(family: unknown, table: unknown): string {
  return `${String(family)}\u0000${String(table)}`;
}

function tableFamily(value: unknown): TableFamily | undefined {
  if (value === 'ip') return 'ipv4';
  if (value === 'ip6') return 'ipv6';
  if (value === 'inet') return 'inet';
  return undefined;
}

function baseOf(chain: Record<string, unknown>): Chain['base'] | 'invalid' {
  const hook = chain['hook'];
  if (hook === undefined) return undefined;
  if (typeof hook !== 'string') return 'invalid';
  if (!HOOKS.includes(hook)) return undefined;
  const prio = chain['prio'];
  const priority =
    typeof prio === 'number'
      ? prio
      : typeof prio === 'string' && Object.hasOwn(NAMED_PRIORITIES, prio)
        ? NAMED_PRIORITIES[prio]
        : undefined;
  const type = chain['type'];
  if (priority === undefined || (type !== 'nat' && type !== 'filter' && type !== 'route')) return 'invalid';
  return { hook: hook as Hook, priority, type, policy: chain['policy'] === 'drop' ? 'drop' : 'accept' };
}
