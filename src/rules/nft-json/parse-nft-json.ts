import { jsonShapeExcess } from '../../file/json-shape.js';
import { MAX_JSON_DEPTH, MAX_NFT_JSON_BYTES } from '../limits.js';
import { oversizeText, TermBudget } from '../limit-checks.js';
import { parseFailure, type ParseFailed, type ParseResult } from '../model.js';
import { isObject } from './json-values.js';
import { NftDocument } from './nft-document.js';

/**
 * Reads `nft -j list ruleset`. Native nftables (Istio's `inet istio-proxy-*` tables) and the
 * iptables-nft view of xtables tables both appear here; the latter carries `xt` expressions nft
 * cannot decode, which become unknown matches/targets so the tracer names them instead of guessing.
 * Tables of families other than ip/ip6/inet (arp, bridge, netdev) do not take part in IP NAT and
 * are skipped. A table or chain listed again is merged the way `nft -j -f` merges it.
 */
export function parseNftJson(
  text: string,
  source: string,
  budget: TermBudget = new TermBudget(text.length),
): ParseResult {
  if (text.trim() === '') return { ok: true, tables: [] };
  const oversize = oversizeText(text, source, MAX_NFT_JSON_BYTES, 'the nft JSON document');
  if (oversize) return oversize;
  if (!budget.spendJsonTree(text.length)) return parseFailure(source, 1, budget.exceeded(), 'RulesTooLarge');
  const document = readJson(text, source);
  if (!document.ok) return document;
  const state = new NftDocument(budget);
  for (let index = 0; index < document.list.length; index++) {
    const problem = state.add(document.list[index], index + 1);
    if (problem) return parseFailure(source, index + 1, problem.message, problem.reason);
  }
  return { ok: true, tables: state.tables() };
}

type JsonRead = { readonly ok: true; readonly list: readonly unknown[] } | ParseFailed;

function readJson(text: string, source: string): JsonRead {
  // Only the depth is bounded here: the dump's size cap (MAX_NFT_JSON_BYTES) bounds its values.
  const excess = jsonShapeExcess(text, { maxDepth: MAX_JSON_DEPTH, maxValues: Infinity });
  if (excess?.kind === 'depth')
    return parseFailure(
      source,
      lineAt(text, excess.at),
      `JSON nested deeper than ${MAX_JSON_DEPTH} levels: not "nft -j list ruleset" output`,
    );
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message);
    return parseFailure(
      source,
      position ? lineAt(text, Number(position[1])) : 1,
      `not JSON (${message}); give the output of "nft -j list ruleset"`,
    );
  }
  const list = isObject(document) ? document['nftables'] : undefined;
  if (!Array.isArray(list))
    return parseFailure(source, 1, 'JSON without an "nftables" array: not "nft -j list ruleset" output');
  return { ok: true, list };
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf('\n'); index >= 0 && index < offset; index = text.indexOf('\n', index + 1)) line++;
  return line;
}
