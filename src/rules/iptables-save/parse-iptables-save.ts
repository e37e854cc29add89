import { MAX_DUMP_BYTES, MAX_LINE_CHARS } from '../limits.js';
import { parseFailure, type Chain, type ParseResult, type Table } from '../model.js';
import { excerpt } from '../excerpt.js';
import { oversizeText, TermBudget } from '../limit-checks.js';
import { builtinChain } from './builtin-chains.js';
import { declareChain, type TableDraft } from './chain-declaration.js';
import { parseRuleLine } from './rule-line.js';
import type { ParseOptions } from './parse-options.js';

interface SaveState {
  readonly tables: Table[];
  readonly seen: Set<string>;
  readonly budget: TermBudget;
  table: TableDraft | undefined;
  tableLine: number;
}

/**
 * Reads `iptables-save` / `ip6tables-save` output (both backends print the same syntax). Structure
 * that iptables-restore would refuse (a rule outside a table, an undeclared chain, a missing COMMIT)
 * is a parse error naming the line; a match or target this reader does not model becomes an
 * `unknown` element of the rule, so the tracer can name it instead of guessing. Text over the caps
 * of limits.ts is refused before any of it is read.
 */
export function parseIptablesSave(text: string, options: ParseOptions): ParseResult {
  const oversize = oversizeText(text, options.source, MAX_DUMP_BYTES, 'the dump');
  if (oversize) return oversize;
  const state: SaveState = {
    tables: [],
    seen: new Set(),
    budget: options.budget ?? new TermBudget(text.length),
    table: undefined,
    tableLine: 0,
  };
  let lineNumber = 0;
  // One line at a time: no array of every line beside the text.
  for (let start = 0; start <= text.length;) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    lineNumber++;
    // trim() also drops the \r of CRLF dumps.
    const failure = readLine(text.slice(start, end).trim(), lineNumber, state, options);
    if (failure) return parseFailure(options.source, lineNumber, failure.message, failure.reason);
    start = end + 1;
  }
  if (state.table)
    return parseFailure(options.source, state.tableLine, `table "${state.table.name}" has no COMMIT (truncated dump?)`);
  return { ok: true, tables: state.tables };
}

type LineFailure = { readonly message: string; readonly reason?: 'RulesTooLarge' } | undefined;

function readLine(line: string, lineNumber: number, state: SaveState, options: ParseOptions): LineFailure {
  if (line === '' || line.charCodeAt(0) === HASH) return undefined;
  if (line.length > MAX_LINE_CHARS) return { message: 'line is too long to be an iptables-save rule' };
  if (line.charCodeAt(0) === STAR) return startTable(line, lineNumber, state);
  const table = state.table;
  if (!table) return { message: `"${excerpt(line)}" appears outside a table (expected *table first)` };
  if (line === 'COMMIT') {
    state.tables.push(finishTable(table, options));
    state.table = undefined;
    return undefined;
  }
  if (line.charCodeAt(0) === COLON) {
    const message = declareChain(line, table);
    return message === undefined ? undefined : { message };
  }
  const parsed = parseRuleLine(line, lineNumber, table, options);
  if ('message' in parsed) return parsed;
  if (!state.budget.spendRule(parsed.rule)) return { message: state.budget.exceeded(), reason: 'RulesTooLarge' };
  parsed.chain.rules.push(parsed.rule);
  return undefined;
}

function startTable(line: string, lineNumber: number, state: SaveState): LineFailure {
  const name = line.slice(1);
  if (state.table) return { message: `table "${name}" starts before table "${state.table.name}" was committed` };
  if (!/^[a-z_]{1,32}$/.test(name)) return { message: `"${excerpt(line)}" does not name a table` };
  if (state.seen.has(name)) return { message: `table "${name}" appears twice` };
  state.seen.add(name);
  state.table = { name, chains: new Map() };
  state.tableLine = lineNumber;
  return undefined;
}

const HASH = 0x23;
const STAR = 0x2a;
const COLON = 0x3a;

function finishTable(draft: TableDraft, options: ParseOptions): Table {
  const chains = new Map<string, Chain>();
  for (const chain of draft.chains.values()) {
    const builtin = builtinChain(draft.name, chain.name);
    chains.set(chain.name, {
      name: chain.name,
      rules: chain.rules,
      ...(builtin && chain.policy ? { base: { ...builtin, policy: chain.policy } } : {}),
    });
  }
  return { backend: options.backend, family: options.family, name: draft.name, chains };
}
