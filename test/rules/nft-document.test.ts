import { describe, expect, it } from 'vitest';
import { JSON_TREE_BYTES_PER_BYTE, MAX_RULESET_BYTES } from '../../src/rules/limits.js';
import { TermBudget } from '../../src/rules/limit-checks.js';
import type { ParseFailureReason, ParseResult } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { METAINFO, oneRuleDocument, tablesOf } from './nft-rule.js';

/**
 * The `nftables` array of `nft -j list ruleset` as tables, chains and rules (shapes as nft 1.0.6
 * prints them: the metainfo first, then each table, its chains, its rules), and the documents the
 * reader refuses, each with its reason, line and sentence.
 */

const SOURCE = 'nft -j list ruleset';
const parse = (text: string): ParseResult => parseNftJson(text, SOURCE);
const doc = (...items: readonly unknown[]): string => JSON.stringify({ nftables: [METAINFO, ...items] });
const failure = (line: number, message: string, reason: ParseFailureReason = 'RulesUnparseable'): ParseResult => ({
  ok: false,
  error: { kind: 'parse-error', reason, source: SOURCE, line, message },
});

const natTable = (family: string, name: string): unknown => ({ table: { family, name, handle: 1 } });
const baseChain = (
  family: string,
  table: string,
  name: string,
  hook: string,
  extra: Record<string, unknown> = {},
): unknown => ({
  chain: { family, table, name, handle: 2, type: 'nat', hook, prio: -100, policy: 'accept', ...extra },
});
const regularChain = (family: string, table: string, name: string): unknown => ({
  chain: { family, table, name, handle: 3 },
});
const rule = (family: string, table: string, chain: string, expr: readonly unknown[]): unknown => ({
  rule: { family, table, chain, handle: 4, expr },
});
const RETURN = { return: null };

describe('parseNftJson: the document', () => {
  it('empty or blank output is no tables', () => {
    expect(parse('')).toEqual({ ok: true, tables: [] });
    expect(parse(' \n\t\n')).toEqual({ ok: true, tables: [] });
  });

  it('a document with only the metainfo is no tables', () => {
    expect(parse(doc())).toEqual({ ok: true, tables: [] });
  });

  it('text that is not JSON names the line of the error', () => {
    const text = `{"nftables": [\n${JSON.stringify(METAINFO)},\n{"table" 1}\n]}`;
    expect(parse(text)).toEqual(
      failure(
        3,
        `not JSON (Expected ':' after property name in JSON at position ${text.lastIndexOf('1}')}); give the output of "nft -j list ruleset"`,
      ),
    );
  });

  it('lines are counted from a newline at the very start, up to the offending character', () => {
    const text = `\n{"nftables": [\n{"table" 1}]}`;
    expect(parse(text)).toEqual(
      failure(
        3,
        `not JSON (Expected ':' after property name in JSON at position ${text.lastIndexOf('1}')}); give the output of "nft -j list ruleset"`,
      ),
    );
    // A raw newline inside a string is the error itself: it ends line 2, it does not start line 3.
    const raw = '{"nftables": [\n"istio\n-output"]}';
    expect(parse(raw)).toEqual(
      failure(
        2,
        `not JSON (Bad control character in string literal in JSON at position ${raw.lastIndexOf('\n')}); give the output of "nft -j list ruleset"`,
      ),
    );
  });

  it('JSON cut short is refused at line 1 (V8 names no position)', () => {
    expect(parse('{"nftables": [\n{}\n,\n')).toEqual(
      failure(1, 'not JSON (Unexpected end of JSON input); give the output of "nft -j list ruleset"'),
    );
  });

  it('JSON without an "nftables" array is refused', () => {
    const sentence = 'JSON without an "nftables" array: not "nft -j list ruleset" output';
    for (const text of ['[]', '{}', '{"nftables": {}}', 'null', '"nftables"'])
      expect(parse(text), text).toEqual(failure(1, sentence));
  });

  it('an element that is not an object is refused at its position', () => {
    expect(parse(doc(natTable('inet', 'istio-proxy-nat'), 7))).toEqual(
      failure(3, 'element of "nftables" is not an object'),
    );
    expect(parse(doc(null))).toEqual(failure(2, 'element of "nftables" is not an object'));
    expect(parse(doc([natTable('inet', 'istio-proxy-nat')]))).toEqual(
      failure(2, 'element of "nftables" is not an object'),
    );
  });

  it('objects other than tables, chains and rules (sets, maps) are passed over', () => {
    const set = {
      set: { family: 'inet', name: 'ports', table: 'istio-proxy-nat', type: 'inet_service', handle: 4, elem: [80] },
    };
    const tables = tablesOf(
      doc(natTable('inet', 'istio-proxy-nat'), set, regularChain('inet', 'istio-proxy-nat', 'istio-output')),
    );
    expect(tables.map((table) => [...table.chains.keys()])).toEqual([['istio-output']]);
  });
});

describe('parseNftJson: size', () => {
  it('a document of 2 MiB is read; one byte more is refused with RulesTooLarge', () => {
    const cap = 2 * 1024 * 1024;
    const text = doc(natTable('inet', 'istio-proxy-nat'));
    const padded = text + ' '.repeat(cap - text.length);
    expect(tablesOf(padded).map((table) => table.name)).toEqual(['istio-proxy-nat']);
    expect(parse(`${padded} `)).toEqual(
      failure(
        1,
        "the nft JSON document is larger than 2 MiB, the limit for one dump; a pod's NAT rules are a few kilobytes",
        'RulesTooLarge',
      ),
    );
  });
});

describe('parseNftJson: nesting', () => {
  /** A rule whose match compares against `depth` nested arrays: an unknown match, but JSON nft could print. */
  const nested = (depth: number): string => {
    const text = oneRuleDocument([{ match: { op: '==', left: { meta: { key: 'cpu' } }, right: 0 } }, RETURN]);
    return text.replace('"right":0', `"right":${'['.repeat(depth)}${']'.repeat(depth)}`);
  };

  it('64 levels are read; 65 are refused at the line of the 65th', () => {
    // The document, the list, the rule object, its body, expr, the match object and its body: 7 levels.
    expect(parse(nested(57)).ok).toBe(true);
    expect(parse(nested(58))).toEqual(
      failure(1, 'JSON nested deeper than 64 levels: not "nft -j list ruleset" output'),
    );
    const text = `{"nftables": [\n${JSON.stringify(METAINFO)},\n${'['.repeat(70)}`;
    expect(parse(text)).toEqual(failure(3, 'JSON nested deeper than 64 levels: not "nft -j list ruleset" output'));
  });

  it('brackets inside strings, after an escaped quote or backslash, do not count', () => {
    const name = `x\\"${'['.repeat(70)}\\\\`;
    const text = `{"nftables": [{"table": {"family": "inet", "name": "${name}", "handle": 1}}, {"table": {"family": "ip", "name": "${'{'.repeat(70)}", "handle": 2}}]}`;
    expect(tablesOf(text).map((table) => table.name)).toEqual([`x"${'['.repeat(70)}\\`, '{'.repeat(70)]);
  });

  it('closing brackets count down: many shallow objects are not deep', () => {
    const chains = Array.from({ length: 80 }, (_, index) => regularChain('inet', 'istio-proxy-nat', `c${index}`));
    expect(tablesOf(doc(natTable('inet', 'istio-proxy-nat'), ...chains))[0]?.chains.size).toBe(80);
  });
});

describe('parseNftJson: the memory budget', () => {
  it('the parsed tree is charged at 12 bytes per byte of text: refused one byte over the cap', () => {
    const text = doc(natTable('inet', 'istio-proxy-nat'));
    const room = MAX_RULESET_BYTES - JSON_TREE_BYTES_PER_BYTE * text.length;
    expect(parseNftJson(text, SOURCE, new TermBudget(room)).ok).toBe(true);
    expect(parseNftJson(text, SOURCE, new TermBudget(room + 1))).toEqual(
      failure(1, new TermBudget().exceeded(), 'RulesTooLarge'),
    );
  });

  it('a rule over the budget is refused at its position with RulesTooLarge', () => {
    const text = oneRuleDocument([RETURN]);
    // The tree, then 160 bytes per rule and per action: the rule costs 320.
    const room = MAX_RULESET_BYTES - JSON_TREE_BYTES_PER_BYTE * text.length - 320;
    expect(parseNftJson(text, SOURCE, new TermBudget(room)).ok).toBe(true);
    expect(parseNftJson(text, SOURCE, new TermBudget(room + 1))).toEqual(
      failure(5, new TermBudget().exceeded(), 'RulesTooLarge'),
    );
  });
});

describe('parseNftJson: tables', () => {
  it('ip, ip6 and inet tables, in order; a table of the same name in each family stays apart', () => {
    const tables = tablesOf(
      doc(
        natTable('ip', 'nat'),
        natTable('ip6', 'nat'),
        natTable('inet', 'nat'),
        regularChain('ip', 'nat', 'four'),
        regularChain('ip6', 'nat', 'six'),
        regularChain('inet', 'nat', 'both'),
      ),
    );
    expect(tables.map((table) => [table.backend, table.family, table.name, [...table.chains.keys()]])).toEqual([
      ['nftables', 'ipv4', 'nat', ['four']],
      ['nftables', 'ipv6', 'nat', ['six']],
      ['nftables', 'inet', 'nat', ['both']],
    ]);
  });

  it('arp, bridge and netdev tables, their chains and rules are passed over', () => {
    const items = [
      natTable('arp', 'a'),
      {
        chain: {
          family: 'arp',
          table: 'a',
          name: 'c',
          handle: 1,
          type: 'filter',
          hook: 'input',
          prio: 0,
          policy: 'accept',
        },
      },
      rule('arp', 'a', 'c', [RETURN]),
      natTable('bridge', 'b'),
      natTable('netdev', 'nd'),
    ];
    expect(parse(doc(...items))).toEqual({ ok: true, tables: [] });
  });

  it('a table without a name is refused', () => {
    expect(parse(doc({ table: { family: 'inet', handle: 1 } }))).toEqual(failure(2, 'table without a name'));
    expect(parse(doc({ table: { family: 'arp', handle: 1 } }))).toEqual(failure(2, 'table without a name'));
  });

  it('a table listed again keeps its chains and rules', () => {
    const tables = tablesOf(
      doc(
        natTable('inet', 'istio-proxy-nat'),
        regularChain('inet', 'istio-proxy-nat', 'istio-output'),
        rule('inet', 'istio-proxy-nat', 'istio-output', [RETURN]),
        natTable('inet', 'istio-proxy-nat'),
        rule('inet', 'istio-proxy-nat', 'istio-output', [{ accept: null }]),
      ),
    );
    expect(tables).toHaveLength(1);
    expect(
      tables[0]?.chains
        .get('istio-output')
        ?.rules.map((one) => [one.provenance.position, one.provenance.line, one.provenance.text]),
    ).toEqual([
      [1, 4, 'return'],
      [2, 6, 'accept'],
    ]);
  });
});

describe('parseNftJson: chains', () => {
  it('a base chain carries hook, type, priority and policy; a regular chain has no base at all', () => {
    const tables = tablesOf(
      doc(
        natTable('inet', 'istio-proxy-mangle'),
        {
          chain: {
            family: 'inet',
            table: 'istio-proxy-mangle',
            name: 'prerouting',
            handle: 1,
            type: 'filter',
            hook: 'prerouting',
            prio: -150,
            policy: 'accept',
          },
        },
        {
          chain: {
            family: 'inet',
            table: 'istio-proxy-mangle',
            name: 'output',
            handle: 2,
            type: 'route',
            hook: 'output',
            prio: -150,
            policy: 'drop',
          },
        },
        {
          chain: {
            family: 'inet',
            table: 'istio-proxy-mangle',
            name: 'input',
            handle: 3,
            type: 'filter',
            hook: 'input',
            prio: 0,
          },
        },
        {
          chain: {
            family: 'inet',
            table: 'istio-proxy-mangle',
            name: 'forward',
            handle: 4,
            type: 'filter',
            hook: 'forward',
            prio: 0,
            policy: 'accept',
          },
        },
        {
          chain: {
            family: 'inet',
            table: 'istio-proxy-mangle',
            name: 'postrouting',
            handle: 5,
            type: 'nat',
            hook: 'postrouting',
            prio: 100,
            policy: 'accept',
          },
        },
        regularChain('inet', 'istio-proxy-mangle', 'istio-divert'),
      ),
    );
    expect(tables[0]?.chains).toStrictEqual(
      new Map([
        [
          'prerouting',
          {
            name: 'prerouting',
            base: { hook: 'prerouting', priority: -150, type: 'filter', policy: 'accept' },
            rules: [],
          },
        ],
        [
          'output',
          { name: 'output', base: { hook: 'output', priority: -150, type: 'route', policy: 'drop' }, rules: [] },
        ],
        ['input', { name: 'input', base: { hook: 'input', priority: 0, type: 'filter', policy: 'accept' }, rules: [] }],
        [
          'forward',
          { name: 'forward', base: { hook: 'forward', priority: 0, type: 'filter', policy: 'accept' }, rules: [] },
        ],
        [
          'postrouting',
          {
            name: 'postrouting',
            base: { hook: 'postrouting', priority: 100, type: 'nat', policy: 'accept' },
            rules: [],
          },
        ],
        ['istio-divert', { name: 'istio-divert', rules: [] }],
      ]),
    );
    expect(Object.keys(tables[0]?.chains.get('istio-divert') ?? {})).toEqual(['name', 'rules']);
  });

  it('named priorities (nft -j -f input) are the numbers nft gives them', () => {
    const named = ['raw', 'mangle', 'dstnat', 'filter', 'security', 'srcnat'];
    const chains = named.map((prio) => ({
      chain: {
        family: 'ip',
        table: 'nat',
        name: prio,
        handle: 1,
        type: 'filter',
        hook: 'prerouting',
        prio,
        policy: 'accept',
      },
    }));
    const table = tablesOf(doc(natTable('ip', 'nat'), ...chains))[0];
    expect(named.map((name) => table?.chains.get(name)?.base?.priority)).toEqual([-300, -150, -100, 0, 50, 100]);
  });

  it('an ingress chain (no part of IP NAT) is read as a chain no packet of the tracer reaches', () => {
    const ingress = {
      chain: {
        family: 'inet',
        table: 'istio-proxy-nat',
        name: 'i',
        handle: 2,
        type: 'filter',
        hook: 'ingress',
        prio: 0,
        policy: 'accept',
      },
    };
    expect(tablesOf(doc(natTable('inet', 'istio-proxy-nat'), ingress))[0]?.chains).toStrictEqual(
      new Map([['i', { name: 'i', rules: [] }]]),
    );
  });

  it('a hook, type or priority this reader does not understand is refused, naming the chain', () => {
    const sentence = 'chain output has a hook this reader does not understand';
    for (const extra of [
      { hook: 7 },
      { type: 'bogus' },
      { prio: 'first' },
      { prio: undefined },
      { prio: 'toString' },
    ]) {
      expect(
        parse(
          doc(natTable('inet', 'istio-proxy-nat'), baseChain('inet', 'istio-proxy-nat', 'output', 'output', extra)),
        ),
        JSON.stringify(extra),
      ).toEqual(failure(3, sentence));
    }
  });

  it('a chain outside a known table, or without a name, is refused', () => {
    const sentence = 'chain outside a known table or without a name';
    expect(
      parse(doc(natTable('inet', 'istio-proxy-nat'), regularChain('inet', 'istio-proxy-mangle', 'istio-output'))),
    ).toEqual(failure(3, sentence));
    expect(
      parse(doc(natTable('inet', 'istio-proxy-nat'), regularChain('ip', 'istio-proxy-nat', 'istio-output'))),
    ).toEqual(failure(3, sentence));
    expect(
      parse(
        doc(natTable('inet', 'istio-proxy-nat'), { chain: { family: 'inet', table: 'istio-proxy-nat', handle: 3 } }),
      ),
    ).toEqual(failure(3, sentence));
  });

  it('a chain of an arp table is passed over even before its table', () => {
    expect(parse(doc(regularChain('arp', 'a', 'c')))).toEqual({ ok: true, tables: [] });
  });

  it('a chain listed again keeps its rules; a regular redeclaration keeps the base; a new policy wins', () => {
    const tables = tablesOf(
      doc(
        natTable('inet', 'istio-proxy-nat'),
        baseChain('inet', 'istio-proxy-nat', 'output', 'output'),
        rule('inet', 'istio-proxy-nat', 'output', [RETURN]),
        regularChain('inet', 'istio-proxy-nat', 'output'),
        baseChain('inet', 'istio-proxy-nat', 'output', 'output', { policy: 'drop' }),
        rule('inet', 'istio-proxy-nat', 'output', [{ accept: null }]),
      ),
    );
    const output = tables[0]?.chains.get('output');
    expect(output?.base).toStrictEqual({ hook: 'output', priority: -100, type: 'nat', policy: 'drop' });
    expect(output?.rules.map((one) => one.provenance.text)).toEqual(['return', 'accept']);
  });

  it('a base chain declared again with another hook, type or priority is refused, as nft refuses it', () => {
    const sentence = 'chain output is declared again with a different hook, type or priority (nft refuses this)';
    for (const extra of [{ hook: 'prerouting' }, { type: 'filter' }, { prio: -99 }]) {
      const text = doc(
        natTable('inet', 'istio-proxy-nat'),
        baseChain('inet', 'istio-proxy-nat', 'output', 'output'),
        baseChain('inet', 'istio-proxy-nat', 'output', 'output', extra),
      );
      expect(parse(text), JSON.stringify(extra)).toEqual(failure(4, sentence));
    }
  });

  it('a regular chain declared again as a base chain is refused', () => {
    const text = doc(
      natTable('inet', 'istio-proxy-nat'),
      regularChain('inet', 'istio-proxy-nat', 'output'),
      baseChain('inet', 'istio-proxy-nat', 'output', 'output'),
    );
    expect(parse(text)).toEqual(
      failure(
        4,
        'chain output was declared as a regular chain and is declared again as a base chain (nft refuses this)',
      ),
    );
  });
});

describe('parseNftJson: rules', () => {
  it('each rule records where it came from: table, chain, its place in the chain and in the document', () => {
    const tables = tablesOf(
      doc(
        natTable('ip', 'nat'),
        regularChain('ip', 'nat', 'PROXY_INIT_OUTPUT'),
        regularChain('ip', 'nat', 'PROXY_INIT_REDIRECT'),
        rule('ip', 'nat', 'PROXY_INIT_OUTPUT', [
          { match: { op: '==', left: { meta: { key: 'oifname' } }, right: 'lo' } },
          { counter: { packets: 0, bytes: 0 } },
          RETURN,
        ]),
        rule('ip', 'nat', 'PROXY_INIT_REDIRECT', [{ xt: { type: 'target', name: 'REDIRECT' } }]),
        rule('ip', 'nat', 'PROXY_INIT_OUTPUT', [{ jump: { target: 'PROXY_INIT_REDIRECT' } }]),
      ),
    );
    const output = tables[0]?.chains.get('PROXY_INIT_OUTPUT')?.rules ?? [];
    expect(output.map((one) => one.provenance)).toEqual([
      {
        backend: 'nftables',
        family: 'ipv4',
        table: 'nat',
        chain: 'PROXY_INIT_OUTPUT',
        position: 1,
        text: 'oifname lo counter return',
        line: 5,
      },
      {
        backend: 'nftables',
        family: 'ipv4',
        table: 'nat',
        chain: 'PROXY_INIT_OUTPUT',
        position: 2,
        text: 'jump PROXY_INIT_REDIRECT',
        line: 7,
      },
    ]);
    expect(output[0]?.matches).toEqual([{ kind: 'interface', field: 'oif', names: ['lo'], negated: false }]);
    expect(output[1]?.actions).toEqual([{ kind: 'jump', chain: 'PROXY_INIT_REDIRECT' }]);
    expect(tables[0]?.chains.get('PROXY_INIT_REDIRECT')?.rules.map((one) => one.provenance)).toEqual([
      {
        backend: 'nftables',
        family: 'ipv4',
        table: 'nat',
        chain: 'PROXY_INIT_REDIRECT',
        position: 1,
        text: 'xt target REDIRECT',
        line: 6,
      },
    ]);
  });

  it('a rule without an expr list is a rule without matches that continues', () => {
    const rules = tablesOf(
      doc(natTable('ip6', 'nat'), regularChain('ip6', 'nat', 'o'), {
        rule: { family: 'ip6', table: 'nat', chain: 'o', handle: 4 },
      }),
    )[0]?.chains.get('o')?.rules;
    expect(rules?.map((one) => [one.matches, one.actions, one.provenance.text, one.provenance.family])).toEqual([
      [[], [{ kind: 'continue', what: 'no verdict' }], '', 'ipv6'],
    ]);
  });

  it('a rule for a chain or table not listed before it is refused', () => {
    const sentence = 'rule for a chain that was not listed before it';
    expect(parse(doc(natTable('ip', 'nat'), rule('ip', 'nat', 'OUTPUT', [RETURN])))).toEqual(failure(3, sentence));
    expect(
      parse(doc(natTable('ip', 'nat'), regularChain('ip', 'nat', 'OUTPUT'), rule('ip', 'mangle', 'OUTPUT', [RETURN]))),
    ).toEqual(failure(4, sentence));
    expect(
      parse(doc(natTable('ip', 'nat'), regularChain('ip', 'nat', 'OUTPUT'), rule('ip6', 'nat', 'OUTPUT', [RETURN]))),
    ).toEqual(failure(4, sentence));
    expect(
      parse(
        doc(natTable('ip', 'nat'), regularChain('ip', 'nat', 'OUTPUT'), {
          rule: { family: 'ip', table: 'nat', handle: 4, expr: [RETURN] },
        }),
      ),
    ).toEqual(failure(4, sentence));
  });
});
