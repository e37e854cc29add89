import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { dumpOf, tableBlock, tablesOf } from './iptables-save-dump.js';

// The parser's cache of shared protocol matches holds 64; this file parses once, so it starts
// empty (each test file gets a fresh module) and the parser is imported where Stryker's static
// mutants stay static (a module re-imported inside a test makes its tables look covered).

describe('the shared protocol cache', () => {
  it('the first 64 protocols read, negated or not, are shared by every rule naming them; the rest are new each time', () => {
    // Protocol numbers IANA left unassigned, which iptables-save prints as numbers.
    const names = Array.from({ length: 70 }, (_, index) => String(143 + index));
    const lines = names.flatMap((name, index) => {
      const line = `-A OUTPUT ${index < 40 ? '! ' : ''}-p ${name} -j RETURN`;
      return [line, line];
    });
    const parsed = parseIptablesSave(dumpOf(tableBlock('nat', [], lines)), {
      backend: 'iptables-nft',
      family: 'ipv4',
      source: 'iptables-save',
    });
    const rules = tablesOf(parsed)[0]?.chains.get('OUTPUT')?.rules ?? [];
    expect(rules).toHaveLength(140);
    expect(names.map((_, index) => rules[2 * index]?.matches[0] === rules[2 * index + 1]?.matches[0])).toEqual(
      names.map((_, index) => index < 64),
    );
    expect(rules[139]?.matches).toEqual([{ kind: 'protocol', protocols: ['212'], negated: false }]);
  });
});
