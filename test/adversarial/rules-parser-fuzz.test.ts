import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InterceptionSpec } from '../../src/config/interception.js';
import { PRESETS } from '../../src/config/interception.js';
import { analyzeDumps, type Dump } from '../../src/rules-check/analyze.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { MAX_JSON_DEPTH, MAX_LINE_CHARS } from '../../src/rules/limits.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { CORPUS, flagsFor, loadManifest } from '../explain/corpus.js';
import { specFromFlags } from '../harness/spec.js';
import { prng } from '../harness/prng.js';

/**
 * Hostile dumps: huge lines, deep nesting, duplicate tables and chains, NUL bytes, invalid UTF-8,
 * prototype keys. None may throw, and none may pass unless the capture rules survived in it.
 */
const linkerdSave = readFileSync(path.join(CORPUS, 'linkerd/cni-default/iptables-nft-save.v4.txt'), 'utf8');
const istioJson = readFileSync(path.join(CORPUS, 'istio-nftables/tproxy/nft-list-ruleset.json'), 'utf8');
const tproxyCase = loadManifest().find((testCase) => testCase.dir === 'istio-nftables/tproxy');
if (!tproxyCase) throw new Error('corpus case istio-nftables/tproxy is missing');
const istioTproxy = specFromFlags(flagsFor(tproxyCase).argv);
// [^\n], not ".": a carriage return inside a quoted comment is still one line.
const LINKERD_CAPTURE = [
  /^-A PROXY_INIT_OUTPUT [^\n]*-j REDIRECT --to-ports 4140$/m,
  /^-A PROXY_INIT_REDIRECT [^\n]*-j REDIRECT --to-ports 4143$/m,
  /^-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 [^\n]*-j RETURN$/m,
];

function analyze(spec: InterceptionSpec, dump: Dump) {
  return analyzeDumps(spec, [dump], { families: ['ipv4'] });
}

const save = (text: string): Dump => ({ backend: 'iptables-nft', family: 'ipv4', source: 'fuzz.txt', text });
const json = (text: string): Dump => ({ backend: 'nftables', source: 'fuzz.json', text });

/** Inserts `piece` at a random line boundary (or inside a line) of `text`. */
function insert(text: string, piece: string, random: () => number): string {
  const at = Math.floor(random() * text.length);
  const cut = random() < 0.5 ? text.lastIndexOf('\n', at) + 1 : at;
  return `${text.slice(0, cut)}${piece}${text.slice(cut)}`;
}

function randomBytes(random: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
}

const HOSTILE_PIECES = (random: () => number): string[] => [
  '\u0000',
  `-A PROXY_INIT_OUTPUT ${'-p tcp '.repeat(Math.floor(MAX_LINE_CHARS / 7) + 1)}-j RETURN\n`,
  `# ${'x'.repeat(MAX_LINE_CHARS + 10)}\n`,
  ':PROXY_INIT_OUTPUT - [0:0]\n',
  '*nat\n',
  'COMMIT\n',
  ':__proto__ - [0:0]\n-A __proto__ -j constructor\n',
  '-A PROXY_INIT_OUTPUT -m comment --comment "\u202e\ud800" -j RETURN\n',
  randomBytes(random, 64).toString('utf8'),
  '\r\n',
];

describe('iptables-save parser under hostile input', () => {
  it('seeded insertions never throw, and a pass keeps the capture rules', () => {
    const random = prng(71);
    let passed = 0;
    for (let i = 0; i < 600; i++) {
      const pieces = HOSTILE_PIECES(random);
      const text = insert(linkerdSave, pieces[Math.floor(random() * pieces.length)] as string, random);
      const result = analyze(PRESETS.linkerd.spec, save(text));
      if (result.kind === 'parse-error') {
        expect(result.error.line).toBeGreaterThanOrEqual(1);
        expect(['RulesUnparseable', 'RulesTooLarge']).toContain(result.error.reason);
        continue;
      }
      if (result.check.status !== 'passed') continue;
      passed++;
      for (const pattern of LINKERD_CAPTURE) expect(text, `case ${i}`).toMatch(pattern);
    }
    expect(passed).toBeGreaterThan(0);
  });

  it('a line one character over the limit is refused; one at the limit is read', () => {
    const head = '-A PROXY_INIT_OUTPUT -m comment --comment "';
    const line = (length: number): string => `${head}${'c'.repeat(length - head.length - 1)}"`;
    const withLine = (length: number): string => linkerdSave.replace('COMMIT', `${line(length)}\nCOMMIT`);
    expect(line(MAX_LINE_CHARS)).toHaveLength(MAX_LINE_CHARS);
    expect(
      parseIptablesSave(withLine(MAX_LINE_CHARS), { backend: 'iptables-nft', family: 'ipv4', source: 'f' }).ok,
    ).toBe(true);
    const over = parseIptablesSave(withLine(MAX_LINE_CHARS + 1), {
      backend: 'iptables-nft',
      family: 'ipv4',
      source: 'f',
    });
    expect(!over.ok && over.error.message).toBe('line is too long to be an iptables-save rule');
  });

  it('a table or chain declared twice is refused (iptables-restore refuses it too)', () => {
    const chainTwice = linkerdSave.replace(
      ':PROXY_INIT_REDIRECT - [0:0]',
      ':PROXY_INIT_REDIRECT - [0:0]\n:PROXY_INIT_REDIRECT - [0:0]',
    );
    const tableTwice = `${linkerdSave}\n*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n`;
    for (const text of [chainTwice, tableTwice]) {
      const parsed = parseIptablesSave(text, { backend: 'iptables-nft', family: 'ipv4', source: 'f' });
      expect(parsed.ok).toBe(false);
    }
  });

  it('random bytes as UTF-8 never throw and never pass', () => {
    const random = prng(72);
    for (let i = 0; i < 300; i++) {
      const text = randomBytes(random, 1 + Math.floor(random() * 2000)).toString(i % 2 === 0 ? 'utf8' : 'latin1');
      for (const [spec, dump] of [
        [PRESETS.linkerd.spec, save(text)],
        [istioTproxy, json(text)],
      ] as const) {
        const result = analyze(spec, dump);
        expect(result.kind === 'checked' && result.check.status === 'passed').toBe(false);
      }
    }
  });
});

describe('nft JSON parser under hostile input', () => {
  it('nesting at the limit is read; one level deeper is refused before JSON.parse', () => {
    const nested = (depth: number): string => `{"nftables":[{"x":${'['.repeat(depth - 3)}${']'.repeat(depth - 3)}}]}`;
    expect(parseNftJson(nested(MAX_JSON_DEPTH), 'f').ok).toBe(true);
    const deeper = parseNftJson(nested(MAX_JSON_DEPTH + 1), 'f');
    expect(!deeper.ok && deeper.error.message).toMatch(/nested deeper than 64 levels/);
  });

  it('brackets inside strings do not count as nesting', () => {
    const text = `{"nftables":[{"table":{"family":"inet","name":"${'['.repeat(500)}\\"${'{'.repeat(500)}"}}]}`;
    expect(parseNftJson(text, 'f').ok).toBe(true);
  });

  it('deep nesting anywhere in a real ruleset never throws', () => {
    const random = prng(73);
    for (let i = 0; i < 100; i++) {
      const depth = 1 + Math.floor(random() * 5000);
      const at = istioJson.indexOf('"expr": [') + '"expr": ['.length;
      const text = `${istioJson.slice(0, at)}${'['.repeat(depth)}${']'.repeat(depth)},${istioJson.slice(at)}`;
      expect(() => analyze(istioTproxy, json(text))).not.toThrow();
      const result = analyze(istioTproxy, json(text));
      if (depth + 6 > MAX_JSON_DEPTH) expect(result.kind).toBe('parse-error');
    }
  });

  it('hostile values in expressions never throw, and a pass keeps every capture statement', () => {
    const random = prng(74);
    const hostile = [
      'null',
      '"\\u0000"',
      '{"__proto__":{"x":1}}',
      '{"constructor":{}}',
      '1e309',
      '-1',
      '"\\ud800"',
      '{"match":{"op":"==","left":{"meta":{"key":"skuid"}},"right":{"set":[{"range":[2,1]}]}}}',
      '{"redirect":{"port":70000}}',
      '{"jump":{"target":"__proto__"}}',
    ];
    let passed = 0;
    for (let i = 0; i < 600; i++) {
      const expressions = [...istioJson.matchAll(/"expr": \[/g)];
      const target = expressions[Math.floor(random() * expressions.length)];
      const at = (target?.index ?? 0) + '"expr": ['.length;
      const text = `${istioJson.slice(0, at)}${hostile[Math.floor(random() * hostile.length)] as string},${istioJson.slice(at)}`;
      const result = analyze(istioTproxy, json(text));
      if (result.kind !== 'checked' || result.check.status !== 'passed') continue;
      passed++;
      for (const statement of ['"redirect": {"port": 15001}', '"tproxy": {"family": "ip", "port": 15006}'])
        expect(text).toContain(statement);
    }
    expect(passed).toBeGreaterThan(0);
  });

  it('a duplicated table or chain anywhere never throws and never loses a rule', () => {
    const document = JSON.parse(istioJson) as { nftables: Record<string, unknown>[] };
    const declarations = document.nftables.filter((item) => 'table' in item || 'chain' in item);
    const ruleCount = document.nftables.filter((item) => 'rule' in item).length;
    const random = prng(75);
    for (let i = 0; i < 200; i++) {
      const list = [...document.nftables];
      const copy = declarations[Math.floor(random() * declarations.length)] as Record<string, unknown>;
      const firstIndex = list.indexOf(copy);
      list.splice(firstIndex + 1 + Math.floor(random() * (list.length - firstIndex)), 0, copy);
      const parsed = parseNftJson(JSON.stringify({ nftables: list }), 'dup.json');
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) continue;
      const rules = parsed.tables
        .flatMap((table) => [...table.chains.values()])
        .reduce((sum, chain) => sum + chain.rules.length, 0);
      expect(rules).toBe(ruleCount);
    }
  });
});
