import type { Action, Match, Table } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';

/** Builders of `nft -j list ruleset` documents, in the exact shape nft 1.0.6 prints them. */

export type NftFamily = 'ip' | 'ip6' | 'inet';

export const METAINFO = { metainfo: { version: '1.0.6', release_name: 'Lester Gooch #5', json_schema_version: 1 } };

const TABLE = 'istio-proxy-nat';

/** A nat table with Istio's base `output` chain and its regular `istio-output` chain, holding one rule. */
export function oneRuleDocument(expr: readonly unknown[], family: NftFamily = 'inet'): string {
  return JSON.stringify({
    nftables: [
      METAINFO,
      { table: { family, name: TABLE, handle: 1 } },
      {
        chain: {
          family,
          table: TABLE,
          name: 'output',
          handle: 1,
          type: 'nat',
          hook: 'output',
          prio: -100,
          policy: 'accept',
        },
      },
      { chain: { family, table: TABLE, name: 'istio-output', handle: 2 } },
      { rule: { family, table: TABLE, chain: 'istio-output', handle: 3, expr } },
    ],
  });
}

export function tablesOf(text: string): readonly Table[] {
  const parsed = parseNftJson(text, 'nft -j list ruleset');
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.tables;
}

export interface ReadRule {
  readonly matches: readonly Match[];
  readonly actions: readonly Action[];
  readonly text: string;
}

/** The one rule of `oneRuleDocument(expr, family)` as the reader models it. */
export function readRule(expr: readonly unknown[], family: NftFamily = 'inet'): ReadRule {
  const rule = tablesOf(oneRuleDocument(expr, family))[0]?.chains.get('istio-output')?.rules[0];
  if (!rule) throw new Error('the rule was not read');
  return { matches: rule.matches, actions: rule.actions, text: rule.provenance.text };
}

/** `{"match": ...}` as nft prints it: op, left, right. */
export const match = (op: string, left: unknown, right: unknown): unknown => ({ match: { op, left, right } });
export const meta = (key: string): unknown => ({ meta: { key } });
export const ct = (key: string): unknown => ({ ct: { key } });
export const payload = (protocol: string, field: string): unknown => ({ payload: { protocol, field } });
export const RETURN = { return: null };
