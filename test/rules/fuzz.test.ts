import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/config/interception.js';
import { analyzeDumps, type Dump } from '../../src/rules-check/analyze.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { CORPUS, flagsFor, loadManifest } from '../explain/corpus.js';
import { specFromFlags } from '../harness/spec.js';
import { prng } from '../harness/prng.js';

const linkerdSave = readFileSync(path.join(CORPUS, 'linkerd/cni-default/iptables-nft-save.v4.txt'), 'utf8');
const istioSave = readFileSync(path.join(CORPUS, 'istio/dns-uid-gid/iptables-legacy-save.v4.txt'), 'utf8');
const istioJson = readFileSync(path.join(CORPUS, 'istio-nftables/tproxy/nft-list-ruleset.json'), 'utf8');
const ALPHABET = [
  '-A',
  '-j',
  '-m',
  '!',
  'REDIRECT',
  '--to-ports',
  'RETURN',
  '*nat',
  'COMMIT',
  ':X - [0:0]',
  '"',
  '\n',
  ' ',
  '--dport',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  'tcp',
  '15001',
  'OUTPUT',
  '0x539',
];

const tproxyCase = loadManifest().find((testCase) => testCase.dir === 'istio-nftables/tproxy');
if (!tproxyCase) throw new Error('corpus case istio-nftables/tproxy is missing');
const istioTproxy = specFromFlags(flagsFor(tproxyCase).argv);

function mutate(text: string, random: () => number): string {
  const chars = [...text];
  const edits = 1 + Math.floor(random() * 6);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (chars.length + 1));
    const choice = random();
    if (choice < 0.35) chars.splice(at, 1 + Math.floor(random() * 20));
    else if (choice < 0.7) chars.splice(at, 0, ...(ALPHABET[Math.floor(random() * ALPHABET.length)] as string));
    else chars.splice(at, 1, String.fromCharCode(Math.floor(random() * 128)));
  }
  return chars.join('');
}

/** Changes one number of the text (a port, a uid, a priority): mutants that stay valid JSON. */
function mutateNumber(text: string, random: () => number): string {
  const numbers = [...text.matchAll(/\d+/g)];
  const target = numbers[Math.floor(random() * numbers.length)];
  if (!target || target.index === undefined) return text;
  const choices = [0, 1, Number(target[0]) + 1, 65535, 65536, 2 ** 32, Math.floor(random() * 70000)];
  return `${text.slice(0, target.index)}${choices[Math.floor(random() * choices.length)]}${text.slice(target.index + target[0].length)}`;
}

function garbage(random: () => number): string {
  let text = '';
  const length = Math.floor(random() * 400);
  for (let i = 0; i < length; i++)
    text +=
      random() < 0.5
        ? (ALPHABET[Math.floor(random() * ALPHABET.length)] as string)
        : String.fromCharCode(Math.floor(random() * 256));
  return text;
}

/** The rules without which a mesh's capture cannot hold: every REDIRECT and every owner exclusion. */
function capturePatterns(base: string): RegExp[] {
  return base
    .split('\n')
    .filter((line) => /-j REDIRECT|--uid-owner|--gid-owner/.test(line))
    .map((line) => {
      const chain = /^-A (\S+)/.exec(line)?.[1] ?? '';
      const essence = /(--[ug]id-owner \d+).*(-j RETURN)$/.exec(line) ?? /(-j REDIRECT --to-ports \d+)$/.exec(line);
      const tail = essence
        ? essence
            .slice(1)
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('[^\\n]*')
        : '';
      // [^\n], not ".": a carriage return inside a quoted comment is still one line.
      return new RegExp(`^-A ${chain} [^\\n]*${tail}$`, 'm');
    });
}

function analyze(dump: Dump, mesh: 'linkerd' | 'istio') {
  return analyzeDumps(PRESETS[mesh].spec, [dump], { families: ['ipv4'] });
}

describe('fuzzing the parsers and the tracer', () => {
  it('random text never throws and never passes', () => {
    const random = prng(1);
    for (let i = 0; i < 1500; i++) {
      const text = garbage(random);
      for (const dump of [
        { backend: 'iptables-nft', family: 'ipv4', source: 'fuzz', text },
        { backend: 'nftables', source: 'fuzz', text },
      ] as Dump[]) {
        const result = analyze(dump, i % 2 === 0 ? 'linkerd' : 'istio');
        if (result.kind === 'checked') expect(result.check.status).not.toBe('passed');
      }
    }
  });

  it('mutated iptables-save dumps never throw, and a pass keeps the capture rules intact', () => {
    const random = prng(2);
    let parsed = 0;
    let passed = 0;
    for (let i = 0; i < 2000; i++) {
      const [base, mesh] = i % 2 === 0 ? [linkerdSave, 'linkerd' as const] : [istioSave, 'istio' as const];
      const text = mutate(base, random);
      const result = analyze({ backend: 'iptables-legacy', family: 'ipv4', source: 'fuzz', text }, mesh);
      if (result.kind === 'parse-error') {
        expect(result.error.line).toBeGreaterThanOrEqual(1);
        continue;
      }
      parsed++;
      if (result.check.status !== 'passed') continue;
      passed++;
      // An oracle outside the engine: a mutant can pass only if every capture and exclusion rule
      // of the original survives in substance (chain, target, port or uid); a comment may change.
      for (const pattern of capturePatterns(base))
        expect(text, `mutant ${i} passed without ${pattern}`).toMatch(pattern);
    }
    expect(parsed).toBeGreaterThan(0);
    expect(passed).toBeGreaterThan(0);
  });

  it('mutated nft JSON never throws, and a pass keeps every capture port', () => {
    const baseline = analyzeDumps(istioTproxy, [{ backend: 'nftables', source: 'corpus', text: istioJson }], {
      families: ['ipv4'],
    });
    expect(baseline.kind === 'checked' && baseline.check.status).toBe('passed');
    const random = prng(3);
    let passed = 0;
    for (let i = 0; i < 1500; i++) {
      const text = i % 2 === 0 ? mutate(istioJson, random) : mutateNumber(istioJson, random);
      expect(() => parseNftJson(text, 'fuzz')).not.toThrow();
      const result = analyzeDumps(istioTproxy, [{ backend: 'nftables', source: 'fuzz', text }], { families: ['ipv4'] });
      if (result.kind !== 'checked' || result.check.status !== 'passed') continue;
      passed++;
      for (const statement of [
        '"redirect": {"port": 15001}',
        '"tproxy": {"family": "ip", "port": 15006}',
        '"meta": {"key": "skuid"}}, "right": 1337',
      ])
        expect(text, `mutant ${i}`).toContain(statement);
    }
    expect(passed).toBeGreaterThan(0);
  });

  it('mutants that remove interception never pass', () => {
    const random = prng(4);
    const lines = linkerdSave.split('\n');
    for (let i = 0; i < 500; i++) {
      // Drop one or more REDIRECT rules: Linkerd's capture cannot hold without both.
      const kept = lines.filter((line) => !(line.includes('REDIRECT') && random() < 0.8));
      const dropped = kept.length < lines.length ? kept : lines.filter((line) => !line.includes('--to-ports 4140'));
      const result = analyze(
        { backend: 'iptables-nft', family: 'ipv4', source: 'fuzz', text: dropped.join('\n') },
        'linkerd',
      );
      expect(result.kind === 'checked' && result.check.status === 'passed').toBe(false);
    }
  });

  it('a jump loop ends as unknown, not a hang', () => {
    const text = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      ':A - [0:0]',
      ':B - [0:0]',
      '-A OUTPUT -j A',
      '-A A -j B',
      '-A B -j A',
      'COMMIT',
      '',
    ].join('\n');
    const result = analyze({ backend: 'iptables-nft', family: 'ipv4', source: 'loop', text }, 'linkerd');
    expect(result.kind).toBe('checked');
    if (result.kind !== 'checked') return;
    expect(result.check.status).not.toBe('passed');
    const outbound = result.check.answers.find((answer) => answer.expectation.id === 'ipv4/outbound/app');
    expect(outbound?.outcomes.map((seen) => seen.outcome.kind)).toEqual(['unknown']);
    expect(result.check.findings.find((finding) => finding.expectation.id === 'ipv4/outbound/app')?.message).toContain(
      'enters a loop (A -> B -> A)',
    );
  });

  it('parse errors name the line', () => {
    const result = parseIptablesSave('*nat\n:OUTPUT ACCEPT [0:0]\n-A NOPE -j RETURN\nCOMMIT\n', {
      backend: 'iptables-nft',
      family: 'ipv4',
      source: 'f.txt',
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ source: 'f.txt', line: 3 });
  });
});
