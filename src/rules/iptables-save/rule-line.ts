import type { Rule } from '../model.js';
import type { ChainDraft, TableDraft } from './chain-declaration.js';
import type { ParseOptions } from './parse-options.js';
import { excerpt } from '../excerpt.js';
import { parseRuleWords } from './rule-words.js';
import { tokenizeLine } from './tokenize.js';

type RuleLine = { readonly chain: ChainDraft; readonly rule: Rule } | { readonly message: string };

const OPEN_BRACKET = 0x5b;

/** One `-A CHAIN ...` line (with `iptables-save -c`'s `[packets:bytes]` prefix, if any). */
export function parseRuleLine(line: string, lineNumber: number, table: TableDraft, options: ParseOptions): RuleLine {
  const words = tokenizeLine(line);
  if (!words) return { message: 'unterminated quote' };
  const head = words[0];
  const start = head !== undefined && head.charCodeAt(0) === OPEN_BRACKET && /^\[\d+:\d+\]$/.test(head) ? 1 : 0;
  if (words[start] === '-I') return { message: 'iptables-save never prints -I; expected -A' };
  if (words[start] !== '-A')
    return { message: `"${excerpt(line)}" is neither a rule (-A) nor a chain, table or COMMIT line` };
  const chainName = words[start + 1];
  if (chainName === undefined) return { message: '-A without a chain name' };
  const chain = table.chains.get(chainName);
  if (!chain) return { message: `rule for chain ${chainName}, which table ${table.name} does not declare` };
  const text = start === 1 ? line.replace(/^\[\d+:\d+\]\s*/, '') : line;
  const body = parseRuleWords(words, start + 2, table, options.family);
  if ('message' in body) return body;
  const provenance = {
    backend: options.backend,
    family: options.family,
    table: table.name,
    // The declared name (the same text) is shared by every rule of the chain.
    chain: chain.name,
    position: chain.rules.length + 1,
    text,
    line: lineNumber,
  };
  return { chain, rule: { matches: body.matches, actions: body.actions, provenance } };
}
