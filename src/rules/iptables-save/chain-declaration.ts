import { excerpt } from '../excerpt.js';
import type { Rule } from '../model.js';
import { builtinChain } from './builtin-chains.js';

export interface ChainDraft {
  readonly name: string;
  readonly policy: 'accept' | 'drop' | undefined;
  readonly rules: Rule[];
}

export interface TableDraft {
  readonly name: string;
  readonly chains: Map<string, ChainDraft>;
}

/**
 * `:NAME POLICY [packets:bytes]`: adds the chain to the table, or says why iptables-restore would
 * refuse the line. Built-in chains carry ACCEPT or DROP, user chains `-`.
 */
export function declareChain(line: string, table: TableDraft): string | undefined {
  const match = /^:(\S{1,64})\s+(\S+)(?:\s+\[\d+:\d+\])?$/.exec(line);
  if (!match) return `"${excerpt(line)}" is not a chain declaration`;
  const name = match[1] as string;
  const policyText = match[2] as string;
  const policy = policyText === 'ACCEPT' ? 'accept' : policyText === 'DROP' ? 'drop' : undefined;
  if (policy === undefined && policyText !== '-') return `chain ${name} has policy "${policyText}"`;
  const builtin = builtinChain(table.name, name) !== undefined;
  if (builtin && policy === undefined) return `built-in chain ${name} has no policy`;
  if (!builtin && policy !== undefined) return `user chain ${name} cannot have a policy`;
  if (table.chains.has(name)) return `chain ${name} is declared twice`;
  table.chains.set(name, { name, policy, rules: [] });
  return undefined;
}
