import { describe, expect, it } from 'vitest';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { nftCase } from '../explain/nft-case.js';

/**
 * `nft -j -f` treats a second `table` or `chain` object as "add": it creates nothing new and keeps
 * the rules already added (checked with nft 1.0.6: a chain declared twice holds the rules of both
 * declarations, in order; a redeclaration that changes hook, type or priority, or hooks a regular
 * chain, is refused with EOPNOTSUPP/EEXIST; a new policy replaces the old one). The reader must do the same.
 */
const { items, explainWith } = nftCase('istio-nftables/basic-exclude-nic');
const outputIndex = items.findIndex((item) => item['chain']?.['name'] === 'output');
const tableIndex = items.findIndex((item) => item['table'] !== undefined);
const outputChain = items[outputIndex] as Record<string, Record<string, unknown>>;
const table = items[tableIndex] as Record<string, Record<string, unknown>>;
const returnRule = {
  rule: { family: 'inet', table: table['table']?.['name'], chain: 'output', handle: 999, expr: [{ return: null }] },
};

describe('nft JSON: a table or chain declared twice is merged as nft merges it', () => {
  it('the unmodified case passes (the baseline the attacks change)', async () => {
    const result = await explainWith(items, 'baseline');
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('a RETURN before a chain redeclaration is kept: outbound capture fails', async () => {
    const attacked = [...items.slice(0, outputIndex + 1), returnRule, outputChain, ...items.slice(outputIndex + 1)];
    const result = await explainWith(attacked, 'chain-twice');
    expect(result.stderr).toBe('');
    expect(result.exitCode, result.stdout).toBe(126);
    expect(result.stdout).toMatch(/output/);
  });

  it('a RETURN before a table and chain redeclaration is kept: outbound capture fails', async () => {
    const attacked = [
      ...items.slice(0, outputIndex + 1),
      returnRule,
      table,
      outputChain,
      ...items.slice(outputIndex + 1),
    ];
    const result = await explainWith(attacked, 'table-twice');
    expect(result.stderr).toBe('');
    expect(result.exitCode, result.stdout).toBe(126);
  });

  it('a table declared twice with nothing in between changes nothing: still a pass', async () => {
    const redeclared = [...items.slice(0, tableIndex + 1), table, ...items.slice(tableIndex + 1)];
    const result = await explainWith(redeclared, 'table-again');
    expect(result.stderr).toBe('');
    expect(result.exitCode, result.stdout).toBe(0);
  });

  it('a redeclaration that changes the hook, type or priority is refused, as nft refuses it', () => {
    const chain = outputChain['chain'] as Record<string, unknown>;
    for (const change of [{ prio: -50 }, { type: 'filter' }, { hook: 'prerouting' }]) {
      const list = [
        ...items.slice(0, outputIndex + 1),
        { chain: { ...chain, ...change } },
        ...items.slice(outputIndex + 1),
      ];
      const parsed = parseNftJson(JSON.stringify({ nftables: list }), 'dup.json');
      expect(parsed.ok, JSON.stringify(change)).toBe(false);
      if (!parsed.ok)
        expect(parsed.error.message).toMatch(/chain output is declared again with a different hook, type or priority/);
    }
  });

  it('a regular chain declared again as a base chain is refused', () => {
    const list = [
      { table: { family: 'inet', name: 't' } },
      { chain: { family: 'inet', table: 't', name: 'o' } },
      { chain: { family: 'inet', table: 't', name: 'o', type: 'nat', hook: 'output', prio: -100, policy: 'accept' } },
    ];
    const parsed = parseNftJson(JSON.stringify({ nftables: list }), 'dup.json');
    expect(parsed.ok).toBe(false);
  });

  it('a redeclared policy replaces the earlier one, as nft does', () => {
    const chain = outputChain['chain'] as Record<string, unknown>;
    const list = [
      ...items.slice(0, outputIndex + 1),
      { chain: { ...chain, policy: 'drop' } },
      ...items.slice(outputIndex + 1),
    ];
    const parsed = parseNftJson(JSON.stringify({ nftables: list }), 'dup.json');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.tables[0]?.chains.get('output')?.base?.policy).toBe('drop');
    expect(parsed.tables[0]?.chains.get('output')?.rules.length).toBeGreaterThan(0);
  });
});
