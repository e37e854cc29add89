import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { dumpOf, tableBlock, tablesOf } from './iptables-save-dump.js';

// The parser shares one match object per protocol it has read, negated or not, up to 64 of them;
// that cache is module state. This file parses once: each test file gets a fresh module, so the
// cache starts empty, and the parser is imported where Stryker's static mutants stay static
// (a module re-imported inside a test makes its tables look covered and unkillable).

describe('the shared protocol matches', () => {
  it('a protocol read twice, negated or not, is the same object each time, and a negated one is never the plain one', () => {
    const parsed = parseIptablesSave(
      dumpOf(
        tableBlock(
          'nat',
          [],
          [
            '-A OUTPUT ! -p sctp -j RETURN',
            '-A OUTPUT -p sctp -j RETURN',
            '-A OUTPUT ! -p sctp -j RETURN',
            '-A OUTPUT -p sctp -j RETURN',
          ],
        ),
      ),
      { backend: 'iptables-nft', family: 'ipv4', source: 'iptables-save' },
    );
    const rules = [...(tablesOf(parsed)[0]?.chains.get('OUTPUT')?.rules ?? [])];
    expect(rules.map((rule) => rule.matches)).toEqual([
      [{ kind: 'protocol', protocols: ['sctp'], negated: true }],
      [{ kind: 'protocol', protocols: ['sctp'], negated: false }],
      [{ kind: 'protocol', protocols: ['sctp'], negated: true }],
      [{ kind: 'protocol', protocols: ['sctp'], negated: false }],
    ]);
    expect(rules[2]?.matches[0]).toBe(rules[0]?.matches[0]);
    expect(rules[3]?.matches[0]).toBe(rules[1]?.matches[0]);
  });
});
