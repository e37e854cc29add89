import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import type { Table } from '../../src/rules/model.js';
import { buildAddressIndex, candidateRules } from '../../src/trace/address-index.js';
import { loopingChains } from '../../src/trace/chain-loops.js';
import type { IntervalSet } from '../../src/trace/interval-set.js';

const set = (...pairs: Array<[number, number]>): IntervalSet =>
  pairs.map(([from, to]) => [BigInt(from), BigInt(to)] as const);

describe('buildAddressIndex', () => {
  // Rule 0 tests no destination; rule 3 one too wide to index (9 intervals); rule 6 exactly 8.
  const nine = set(...Array.from({ length: 9 }, (_, k): [number, number] => [100 + 2 * k, 100 + 2 * k]));
  const eight = set(...Array.from({ length: 8 }, (_, k): [number, number] => [200 + 2 * k, 200 + 2 * k]));
  const index = buildAddressIndex([
    undefined,
    set([10, 20]),
    set([5, 8], [30, 40]),
    nine,
    set([15, 16]),
    set([10, 12]),
    eight,
  ]);

  it('sorts the entries by start, then by rule, and keeps the largest end so far', () => {
    expect(index.starts.slice(0, 5)).toEqual([5n, 10n, 10n, 15n, 30n]);
    expect(index.ends.slice(0, 5)).toEqual([8n, 20n, 12n, 16n, 40n]);
    expect(index.rules.slice(0, 5)).toEqual([2, 1, 5, 4, 2]);
    expect(index.reach.slice(0, 5)).toEqual([8n, 20n, 20n, 20n, 40n]);
    expect(index.always).toEqual([0, 3]);
  });

  it('a rule with 8 destination intervals is indexed, one with 9 is not', () => {
    expect(index.rules.slice(5)).toEqual([6, 6, 6, 6, 6, 6, 6, 6]);
    expect(index.starts.slice(5)).toEqual([200n, 202n, 204n, 206n, 208n, 210n, 212n, 214n]);
    expect(index.reach.slice(5)).toEqual([200n, 202n, 204n, 206n, 208n, 210n, 212n, 214n]);
    expect(index.starts).toHaveLength(13);
  });

  it('no rules: an empty index that offers nothing', () => {
    const empty = buildAddressIndex([]);
    expect(empty).toEqual({ starts: [], ends: [], rules: [], reach: [], always: [] });
    expect(candidateRules(empty, set([0, 0xffffffff]), 0)).toEqual([]);
  });

  it('equal starts of later rules keep rule order; an earlier rule with a later start sorts after', () => {
    const ties = buildAddressIndex([set([7, 9]), set([3, 4]), set([3, 6]), set([3, 3])]);
    expect(ties.rules).toEqual([1, 2, 3, 0]);
    expect(ties.reach).toEqual([4n, 6n, 6n, 9n]);
  });
});

describe('candidateRules', () => {
  const index = buildAddressIndex([
    undefined,
    set([10, 20]),
    set([5, 8], [30, 40]),
    set(...Array.from({ length: 9 }, (_, k): [number, number] => [100 + 2 * k, 100 + 2 * k])),
    set([15, 16]),
    set([10, 12]),
  ]);

  it('the rules whose destinations meet the region, with the unindexed ones, in rule order', () => {
    expect(candidateRules(index, set([10, 10]), 0)).toEqual([0, 1, 3, 5]);
    expect(candidateRules(index, set([15, 15]), 0)).toEqual([0, 1, 3, 4]);
    expect(candidateRules(index, set([16, 16]), 0)).toEqual([0, 1, 3, 4]);
    expect(candidateRules(index, set([8, 10]), 0)).toEqual([0, 1, 2, 3, 5]);
    expect(candidateRules(index, set([8, 8]), 0)).toEqual([0, 2, 3]);
    expect(candidateRules(index, set([5, 5]), 0)).toEqual([0, 2, 3]);
    expect(candidateRules(index, set([40, 40]), 0)).toEqual([0, 2, 3]);
  });

  it('gaps, and addresses before the first or after the last entry, leave only the unindexed rules', () => {
    expect(candidateRules(index, set([9, 9]), 0)).toEqual([0, 3]);
    expect(candidateRules(index, set([21, 29]), 0)).toEqual([0, 3]);
    expect(candidateRules(index, set([0, 4]), 0)).toEqual([0, 3]);
    expect(candidateRules(index, set([41, 0xffffffff]), 0)).toEqual([0, 3]);
    expect(candidateRules(index, [], 0)).toEqual([0, 3]);
  });

  it('several intervals at once, each rule once', () => {
    expect(candidateRules(index, set([5, 5], [30, 30]), 0)).toEqual([0, 2, 3]);
    expect(candidateRules(index, set([0, 0xffffffff]), 0)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('only rules from `first` on, `first` included', () => {
    expect(candidateRules(index, set([10, 10]), 1)).toEqual([1, 3, 5]);
    expect(candidateRules(index, set([10, 10]), 2)).toEqual([3, 5]);
    expect(candidateRules(index, set([10, 10]), 3)).toEqual([3, 5]);
    expect(candidateRules(index, set([10, 10]), 4)).toEqual([5]);
    expect(candidateRules(index, set([10, 10]), 6)).toEqual([]);
  });
});

function nat(chains: string[], rules: string[]): Table {
  const text = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ...chains.map((c) => `:${c} - [0:0]`),
    ...rules,
    'COMMIT',
    '',
  ].join('\n');
  const parsed = parseIptablesSave(text, { backend: 'iptables-legacy', family: 'ipv4', source: 't' });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.tables[0] as Table;
}

const loops = (table: Table): Record<string, string> =>
  Object.fromEntries([...loopingChains(table)].map(([chain, cycle]) => [chain.name, cycle]));

describe('loopingChains', () => {
  it('no jumps, or jumps that end: no loop (chains later in the table peeled first)', () => {
    expect(loops(nat([], []))).toEqual({});
    expect(
      loops(
        nat(
          ['A', 'B', 'C'],
          ['-A OUTPUT -j A', '-A A -j B', '-A A -p tcp -j REDIRECT --to-ports 15001', '-A B -g C', '-A C -j RETURN'],
        ),
      ),
    ).toEqual({});
    expect(loops(nat(['C', 'B', 'A'], ['-A OUTPUT -j A', '-A A -j B', '-A B -j C', '-A PREROUTING -j C']))).toEqual({});
  });

  it('a goto cycle, every chain that reaches it, and the cycle each one names', () => {
    const table = nat(
      ['A', 'B', 'C', 'D'],
      ['-A OUTPUT -j C', '-A A -g B', '-A B -j RETURN', '-A B -g A', '-A C -p tcp -j A', '-A D -j RETURN'],
    );
    expect(loops(table)).toEqual({ OUTPUT: 'A -> B -> A', A: 'A -> B -> A', B: 'B -> A -> B', C: 'A -> B -> A' });
  });

  it('a chain that jumps to itself', () => {
    expect(
      loops(nat(['MESH'], ['-A PREROUTING -j MESH', '-A MESH -d 10.0.0.0/8 -j RETURN', '-A MESH -j MESH'])),
    ).toEqual({ PREROUTING: 'MESH -> MESH', MESH: 'MESH -> MESH' });
  });

  it('a chain with a loop-free target before its looping one names the loop', () => {
    expect(loops(nat(['A', 'B', 'X'], ['-A OUTPUT -j X', '-A OUTPUT -j A', '-A A -j B', '-A B -j A']))).toEqual({
      OUTPUT: 'A -> B -> A',
      A: 'A -> B -> A',
      B: 'B -> A -> B',
    });
  });
});
