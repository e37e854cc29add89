import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import {
  atomLabels,
  atomOf,
  atomsMatching,
  buildInterfaceAtoms,
  interfaceMatches,
} from '../../src/trace/interface-atoms.js';
import { interfacePatterns } from '../../src/trace/interface-patterns.js';

// Interface names as iptables-save prints them (`-i eth0`, `-o eth+`, `! -o lo`) and nft's `eth*`.
const atoms = (mentioned: string[]) => buildInterfaceAtoms(mentioned).atoms;

describe('interfaceMatches', () => {
  it('an iptables `+` or nft `*` wildcard matches any suffix of its prefix, and only that', () => {
    expect(interfaceMatches('eth+', 'eth')).toBe(true);
    expect(interfaceMatches('eth+', 'eth0')).toBe(true);
    expect(interfaceMatches('eth*', 'eth12')).toBe(true);
    expect(interfaceMatches('eth+', 'et')).toBe(false);
    expect(interfaceMatches('eth+', 'xeth')).toBe(false);
    expect(interfaceMatches('eth*', 'veth0')).toBe(false);
    expect(interfaceMatches('+', '')).toBe(true);
    expect(interfaceMatches('*', 'wlan0')).toBe(true);
  });

  it('an exact name matches itself only; a `+` inside a name is no wildcard', () => {
    expect(interfaceMatches('eth0', 'eth0')).toBe(true);
    expect(interfaceMatches('eth0', 'eth00')).toBe(false);
    expect(interfaceMatches('eth0', 'eth')).toBe(false);
    expect(interfaceMatches('', '')).toBe(true);
    expect(interfaceMatches('', 'lo')).toBe(false);
    expect(interfaceMatches('e+th', 'e+th')).toBe(true);
    expect(interfaceMatches('e+th', 'e+thx')).toBe(false);
  });
});

describe('buildInterfaceAtoms', () => {
  it('nothing mentioned: lo and any other interface', () => {
    expect(buildInterfaceAtoms([])).toEqual({
      atoms: [
        { representative: 'lo', label: 'lo' },
        { representative: 'ilk0', label: 'any other interface' },
      ],
      all: 3n,
      patterns: ['lo'],
    });
  });

  it('patterns come back sorted and without repeats', () => {
    expect(buildInterfaceAtoms(['veth+', 'eth0', 'lo', 'eth0']).patterns).toEqual(['eth0', 'lo', 'veth+']);
    expect(buildInterfaceAtoms(['veth+', 'eth0', 'lo', 'eth0']).all).toBe(15n);
  });

  it('a wildcard is represented by its bare prefix while nothing else claims it', () => {
    expect(atoms(['eth+'])).toEqual([
      { representative: 'eth', label: 'eth+ (other)' },
      { representative: 'lo', label: 'lo' },
      { representative: 'ilk0', label: 'any other interface' },
    ]);
    expect(atoms(['eth*'])[0]).toEqual({ representative: 'eth', label: 'eth+ (other)' });
  });

  it('each exact name under a wildcard pushes its representative to the next free suffix', () => {
    const rep = (names: string[]) => atoms(['eth+', ...names]).find((atom) => atom.label === 'eth+ (other)');
    expect(rep(['eth'])).toEqual({ representative: 'eth0', label: 'eth+ (other)' });
    expect(rep(['eth', 'eth0'])).toEqual({ representative: 'ethx9', label: 'eth+ (other)' });
    expect(rep(['eth', 'eth0', 'ethx9'])).toEqual({ representative: 'ethq7z', label: 'eth+ (other)' });
    expect(rep(['eth', 'eth0', 'ethx9', 'ethq7z'])).toEqual({ representative: 'ethzz42', label: 'eth+ (other)' });
    expect(rep(['eth', 'eth0', 'ethx9', 'ethq7z', 'ethzz42'])).toEqual({
      representative: 'eth~',
      label: 'eth+ (other)',
    });
  });

  it('a wildcard whose every candidate is claimed gets no atom of its own', () => {
    expect(atoms(['eth+', 'eth', 'eth0', 'ethx9', 'ethq7z', 'ethzz42', 'eth~']).map((atom) => atom.label)).toEqual([
      'eth',
      'eth0',
      'ethq7z',
      'ethx9',
      'ethzz42',
      'eth~',
      'lo',
      'any other interface',
    ]);
  });

  it('a longer wildcard claims names under a shorter one; a shorter or equal one does not', () => {
    expect(atoms(['e+', 'e0+'])).toEqual([
      { representative: 'e', label: 'e+ (other)' },
      { representative: 'e0', label: 'e0+ (other)' },
      { representative: 'lo', label: 'lo' },
      { representative: 'ilk0', label: 'any other interface' },
    ]);
    expect(atoms(['e+', 'e', 'e0+'])).toEqual([
      { representative: 'e', label: 'e' },
      { representative: 'ex9', label: 'e+ (other)' },
      { representative: 'e0', label: 'e0+ (other)' },
      { representative: 'lo', label: 'lo' },
      { representative: 'ilk0', label: 'any other interface' },
    ]);
  });

  it('a universal wildcard has a non-empty representative and replaces "any other interface"', () => {
    expect(buildInterfaceAtoms(['+'])).toEqual({
      atoms: [
        { representative: '0', label: '+ (other)' },
        { representative: 'lo', label: 'lo' },
      ],
      all: 3n,
      patterns: ['+', 'lo'],
    });
    expect(atoms(['*'])).toEqual([
      { representative: '0', label: '+ (other)' },
      { representative: 'lo', label: 'lo' },
    ]);
    expect(atoms(['+', '0+'])).toEqual([
      { representative: 'x9', label: '+ (other)' },
      { representative: '0', label: '0+ (other)' },
      { representative: 'lo', label: 'lo' },
    ]);
  });

  it('the empty name (no interface on this side) is its own atom', () => {
    expect(atoms([''])).toEqual([
      { representative: '', label: '(none)' },
      { representative: 'lo', label: 'lo' },
      { representative: 'ilk0', label: 'any other interface' },
    ]);
  });

  it('"any other interface" takes the first candidate no pattern matches, and is left out when all are', () => {
    const other = (mentioned: string[]) => atoms(mentioned).find((atom) => atom.label === 'any other interface');
    expect(other(['ilk0'])).toEqual({ representative: '~q', label: 'any other interface' });
    expect(other(['ilk+', '~q'])).toEqual({ representative: '~~q7', label: 'any other interface' });
    expect(other(['ilk0', '~+'])).toEqual({ representative: '\u00e9q', label: 'any other interface' });
    expect(atoms(['ilk0', '~+', '\u00e9+']).map((atom) => atom.label)).toEqual([
      'ilk0',
      'lo',
      '~+ (other)',
      '\u00e9+ (other)',
    ]);
  });
});

describe('atomsMatching, atomLabels, atomOf', () => {
  // Atoms: 0 `eth+ (other)` (eth), 1 eth0, 2 lo, 3 any other interface (ilk0).
  const universe = buildInterfaceAtoms(['eth+', 'eth0']);

  it('the atoms a list of patterns matches, as bits', () => {
    expect(atomsMatching(universe, ['eth+'])).toBe(0b0011n);
    expect(atomsMatching(universe, ['eth0'])).toBe(0b0010n);
    expect(atomsMatching(universe, ['eth0', 'lo'])).toBe(0b0110n);
    expect(atomsMatching(universe, ['+'])).toBe(0b1111n);
    expect(atomsMatching(universe, ['wlan0'])).toBe(0n);
    expect(atomsMatching(universe, [])).toBe(0n);
  });

  it('the labels of a bit set, in atom order', () => {
    expect(atomLabels(universe, 0b1010n)).toEqual(['eth0', 'any other interface']);
    expect(atomLabels(universe, 0b0101n)).toEqual(['eth+ (other)', 'lo']);
    expect(atomLabels(universe, 0n)).toEqual([]);
  });

  it('the atom an actual name falls in', () => {
    expect(atomOf(universe, 'eth7')).toBe(0b0001n);
    expect(atomOf(universe, 'eth')).toBe(0b0001n);
    expect(atomOf(universe, 'eth0')).toBe(0b0010n);
    expect(atomOf(universe, 'lo')).toBe(0b0100n);
    expect(atomOf(universe, 'wlan0')).toBe(0b1000n);
    expect(atomOf(universe, '')).toBe(0b1000n);
  });

  it('no atom when a name falls outside every one (only hostile names leave no "other")', () => {
    const hostile = buildInterfaceAtoms(['ilk0', '~+', '\u00e9+']);
    expect(atomOf(hostile, 'wlan0')).toBe(0n);
    expect(atomOf(hostile, 'ilk0')).toBe(0b0001n);
    expect(atomOf(hostile, '~abc')).toBe(0b0100n);
  });
});

describe('interfacePatterns', () => {
  it('every name and wildcard the matches mention, in every table, once', () => {
    const text = [
      '*mangle',
      ':PREROUTING ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      '-A PREROUTING -i eth0 -p tcp -j MARK --set-xmark 0x1/0xffffffff',
      'COMMIT',
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      ':MESH - [0:0]',
      '-A OUTPUT -j MESH',
      '-A MESH -o lo -j RETURN',
      '-A MESH ! -o veth+ -m owner --uid-owner 1337 -j RETURN',
      '-A MESH -i eth0 -j RETURN',
      '-A MESH -p tcp -j REDIRECT --to-ports 15001',
      'COMMIT',
      '',
    ].join('\n');
    const parsed = parseIptablesSave(text, { backend: 'iptables-nft', family: 'ipv4', source: 't' });
    if (!parsed.ok) throw new Error(parsed.error.message);
    expect([...interfacePatterns({ tables: parsed.tables })]).toEqual(['eth0', 'lo', 'veth+']);
    expect([...interfacePatterns({ tables: [] })]).toEqual([]);
  });
});
