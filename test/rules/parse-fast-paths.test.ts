import { isIPv4 } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../src/addr/cidr.js';
import { ipv4Number, parseIp } from '../../src/addr/ip.js';
import { parsePortSet } from '../../src/addr/port-set.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { tokenizeLine } from '../../src/rules/iptables-save/tokenize.js';
import { prng } from '../harness/prng.js';

/** The tokenizer's rules written as plainly as possible, one character at a time. */
function referenceTokenize(line: string): string[] | undefined {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quoted = false;
  for (let index = 0; index < line.length; index++) {
    const char = line[index] as string;
    if (quoted) {
      if (char === '\\') {
        if (index + 1 >= line.length) return undefined;
        current += line[++index];
      } else if (char === '"') quoted = false;
      else current += char;
    } else if (char === '"') {
      quoted = true;
      inWord = true;
    } else if (char === ' ' || char === '\t' || char === '\r') {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (quoted) return undefined;
  if (inWord) words.push(current);
  return words;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

describe('iptables-save tokenizer', () => {
  it('matches the plain character-by-character rules on random lines', () => {
    const random = prng(11);
    const pieces = ['-A', 'X', ' ', '  ', '\t', '\r', '"', '\\', '\\"', 'a b', '--comment', 'x', ''];
    for (let i = 0; i < 20000; i++) {
      let line = '';
      const count = Math.floor(random() * 12);
      for (let j = 0; j < count; j++) line += pick(random, pieces);
      expect(tokenizeLine(line), JSON.stringify(line)).toEqual(referenceTokenize(line));
    }
  });

  it('quoted words, escapes and empty quotes', () => {
    expect(tokenizeLine('-A X -m comment --comment "a \\"b\\" \\\\c" -j RETURN')).toEqual([
      '-A',
      'X',
      '-m',
      'comment',
      '--comment',
      'a "b" \\c',
      '-j',
      'RETURN',
    ]);
    expect(tokenizeLine('a""b "" c')).toEqual(['ab', '', 'c']);
    expect(tokenizeLine('\t a \r')).toEqual(['a']);
  });

  it('a quote ending in a lone backslash is unterminated (it used to loop forever)', () => {
    expect(tokenizeLine('-A X -m comment --comment "abc\\')).toBeUndefined();
    const parsed = parseIptablesSave('*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -m comment --comment "abc\\\nCOMMIT\n', {
      backend: 'iptables-nft',
      family: 'ipv4',
      source: 't',
    });
    expect(parsed).toEqual({
      ok: false,
      error: { kind: 'parse-error', reason: 'RulesUnparseable', source: 't', line: 3, message: 'unterminated quote' },
    });
  });
});

describe('address and port fast paths agree with the general parsers', () => {
  it('ipv4Number accepts exactly what node:net isIPv4 accepts', () => {
    const random = prng(12);
    const parts = [
      '0',
      '1',
      '00',
      '01',
      '9',
      '10',
      '99',
      '100',
      '199',
      '200',
      '249',
      '250',
      '255',
      '256',
      '300',
      '999',
      '1000',
      '',
      '.',
      'a',
      ' ',
      '-1',
      '+1',
      '1e2',
    ];
    for (let i = 0; i < 20000; i++) {
      const count = 1 + Math.floor(random() * 6);
      const text = Array.from({ length: count }, () => pick(random, parts)).join(random() < 0.9 ? '.' : '');
      expect(ipv4Number(text) !== undefined, text).toBe(isIPv4(text));
      if (isIPv4(text))
        expect(ipv4Number(text)).toBe(text.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0));
    }
    expect(parseIp(' 10.1.2.3 ')).toEqual({ family: 'ipv4', value: 0x0a010203n });
    expect(parseIp('255.255.255.255')).toEqual({ family: 'ipv4', value: 0xffffffffn });
  });

  it('IPv4 CIDRs are masked the same as with BigInt netmasks', () => {
    const random = prng(13);
    for (let i = 0; i < 5000; i++) {
      const value = Math.floor(random() * 2 ** 32);
      const prefix = Math.floor(random() * 33);
      const text = `${[24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.')}/${prefix}`;
      const bits = (1n << 32n) - 1n;
      const mask = prefix === 0 ? 0n : (bits << BigInt(32 - prefix)) & bits;
      expect(parseCidr(text)).toEqual({ family: 'ipv4', base: BigInt(value) & mask, prefix });
    }
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('10.0.0.0/8/8')).toBeUndefined();
    expect(parseCidr('10.0.0.0/')).toBeUndefined();
    expect(parseCidr('10.0.0.0/1a')).toBeUndefined();
    expect(parseCidr(' 10.1.2.3 ')).toEqual({ family: 'ipv4', base: 0x0a010203n, prefix: 32 });
    expect(parseCidr('fd00::1/64')).toEqual({ family: 'ipv6', base: 0xfd00n << 112n, prefix: 64 });
  });

  it('single ports: the same answers as the list syntax', () => {
    expect(parsePortSet('80')).toEqual({ ok: true, value: { kind: 'ranges', ranges: [{ from: 80, to: 80 }] } });
    expect(parsePortSet('080')).toEqual({ ok: true, value: { kind: 'ranges', ranges: [{ from: 80, to: 80 }] } });
    expect(parsePortSet('0')).toEqual({ ok: false, error: '"0" is outside 1-65535' });
    expect(parsePortSet('65536')).toEqual({ ok: false, error: '"65536" is outside 1-65535' });
    expect(parsePortSet(' 80 ')).toEqual({ ok: true, value: { kind: 'ranges', ranges: [{ from: 80, to: 80 }] } });
    expect(parsePortSet('123456').ok).toBe(false);
  });
});

describe('option words are looked up as words', () => {
  it('"constructor" or "__proto__" in a rule is an unknown option named as written', () => {
    const text =
      '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -m tcp constructor x -j RETURN\n-A OUTPUT __proto__ -j RETURN\nCOMMIT\n';
    const parsed = parseIptablesSave(text, { backend: 'iptables-nft', family: 'ipv4', source: 't' });
    if (!parsed.ok) throw new Error(parsed.error.message);
    const rules = parsed.tables[0]?.chains.get('OUTPUT')?.rules ?? [];
    expect(rules.map((rule) => rule.matches)).toEqual([
      [{ kind: 'unknown', text: '-m tcp constructor x' }],
      [{ kind: 'unknown', text: '__proto__' }],
    ]);
  });
});
