import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Family } from '../../src/addr/ip.js';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { mergeRuleSources, type RuleSource } from '../../src/rules/merge.js';
import type { Backend, Table } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { CORPUS } from '../explain/corpus.js';

const corpus = (dir: string, file: string): string => readFileSync(path.join(CORPUS, dir, file), 'utf8');

function tablesOf(result: ReturnType<typeof parseNftJson>): readonly Table[] {
  if (!result.ok) throw new Error(result.error.message);
  return result.tables;
}

const iptables = (backend: Exclude<Backend, 'nftables'>, family: Family, text: string): RuleSource => ({
  backend,
  family,
  tables: tablesOf(parseIptablesSave(text, { backend, family, source: `${backend}-save` })),
});
const nft = (text: string): RuleSource => ({
  backend: 'nftables',
  tables: tablesOf(parseNftJson(text, 'nft -j list ruleset')),
});

/** The same dump after `iptables -t nat -F`: the tables and chains stay, no rule does. */
const flushed = (text: string): string =>
  text
    .split('\n')
    .filter((line) => !line.startsWith('-A '))
    .join('\n');

const DUAL = 'istio/dns-uid-gid';
const LINKERD = 'linkerd/cni-default';
const linkerdLegacy = (): RuleSource =>
  iptables('iptables-legacy', 'ipv4', corpus(LINKERD, 'iptables-legacy-save.v4.txt'));
const linkerdNft = (): RuleSource => iptables('iptables-nft', 'ipv4', corpus(LINKERD, 'iptables-nft-save.v4.txt'));
const istioNative = (): RuleSource => nft(corpus('istio-nftables/tproxy', 'nft-list-ruleset.json'));

describe('mergeRuleSources: iptables-nft tables listed again by nft', () => {
  it('drops the ip and ip6 copies of every table iptables-nft-save already read, naming each in nft syntax', () => {
    const merged = mergeRuleSources([
      iptables('iptables-nft', 'ipv4', corpus(DUAL, 'iptables-nft-save.v4.txt')),
      iptables('iptables-nft', 'ipv6', corpus(DUAL, 'iptables-nft-save.v6.txt')),
      nft(corpus(DUAL, 'nft-list-ruleset.json')),
    ]);
    expect(merged.notes).toEqual([
      "nft table ip nat is iptables-nft's; read through iptables-nft-save instead",
      "nft table ip raw is iptables-nft's; read through iptables-nft-save instead",
      "nft table ip6 nat is iptables-nft's; read through iptables-nft-save instead",
      "nft table ip6 raw is iptables-nft's; read through iptables-nft-save instead",
    ]);
    expect(merged.ruleset.tables.map((table) => `${table.backend} ${table.family} ${table.name}`)).toEqual([
      'iptables-nft ipv4 raw',
      'iptables-nft ipv4 nat',
      'iptables-nft ipv6 raw',
      'iptables-nft ipv6 nat',
    ]);
    expect(merged.backendsWithRules).toEqual(['iptables-nft']);
    expect(merged.splitAcrossBackends).toBe(false);
  });

  it('keeps an nft table of a family iptables-nft-save did not read', () => {
    const merged = mergeRuleSources([
      iptables('iptables-nft', 'ipv4', corpus(DUAL, 'iptables-nft-save.v4.txt')),
      nft(corpus(DUAL, 'nft-list-ruleset.json')),
    ]);
    expect(merged.notes).toEqual([
      "nft table ip nat is iptables-nft's; read through iptables-nft-save instead",
      "nft table ip raw is iptables-nft's; read through iptables-nft-save instead",
    ]);
    expect(
      merged.ruleset.tables
        .filter((table) => table.backend === 'nftables')
        .map((table) => `${table.family} ${table.name}`),
    ).toEqual(['ipv6 nat', 'ipv6 raw']);
    expect(merged.backendsWithRules).toEqual(['iptables-nft', 'nftables']);
  });
});

describe('mergeRuleSources: which backends hold rules', () => {
  it('one backend alone: listed once however many of its tables hold rules, with no note', () => {
    const merged = mergeRuleSources([iptables('iptables-nft', 'ipv4', corpus(DUAL, 'iptables-nft-save.v4.txt'))]);
    expect(merged.ruleset.tables).toHaveLength(2);
    expect(merged.backendsWithRules).toEqual(['iptables-nft']);
    expect(merged.splitAcrossBackends).toBe(false);
    expect(merged.notes).toEqual([]);
  });

  it('a backend whose tables hold only chains is not listed', () => {
    const merged = mergeRuleSources([
      iptables('iptables-legacy', 'ipv4', flushed(corpus(LINKERD, 'iptables-legacy-save.v4.txt'))),
      linkerdNft(),
    ]);
    expect(merged.ruleset.tables).toHaveLength(2);
    expect(merged.backendsWithRules).toEqual(['iptables-nft']);
    expect(merged.splitAcrossBackends).toBe(false);
    expect(merged.notes).toEqual([]);
  });

  it('iptables-legacy alone is not a split', () => {
    const merged = mergeRuleSources([linkerdLegacy()]);
    expect(merged.backendsWithRules).toEqual(['iptables-legacy']);
    expect(merged.splitAcrossBackends).toBe(false);
    expect(merged.notes).toEqual([]);
  });

  it('iptables-nft beside native nftables is not a split: both are nf_tables', () => {
    const merged = mergeRuleSources([linkerdNft(), istioNative()]);
    expect(merged.backendsWithRules).toEqual(['iptables-nft', 'nftables']);
    expect(merged.splitAcrossBackends).toBe(false);
    expect(merged.notes).toEqual([]);
  });

  it('iptables-legacy beside nf_tables is a split, and the note names every backend in the order read', () => {
    const merged = mergeRuleSources([linkerdLegacy(), linkerdNft(), istioNative()]);
    expect(merged.backendsWithRules).toEqual(['iptables-legacy', 'iptables-nft', 'nftables']);
    expect(merged.splitAcrossBackends).toBe(true);
    expect(merged.notes).toEqual([
      'rules are split across backends (iptables-legacy, iptables-nft, nftables): the kernel runs all of them; the trace follows each in hook-priority order',
    ]);
    expect(merged.ruleset.tables).toHaveLength(5);
  });
});
