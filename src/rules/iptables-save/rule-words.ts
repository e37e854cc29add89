import type { Family } from '../../addr/ip.js';
import type { Action, Match } from '../model.js';
import { addressMatch, protocolMatch } from './address-protocol.js';
import type { TableDraft } from './chain-declaration.js';
import { isKnownModule, parseModuleOption } from './module-options.js';
import { aliasOf, isRuleLevelOption } from './option-names.js';
import { parseTarget } from './target.js';

interface RuleBody {
  readonly matches: Match[];
  readonly actions: Action[];
}

/** Where the reading of one rule's words stands: what was read, the word next, the module in force. */
interface RuleCursor extends RuleBody {
  readonly words: readonly string[];
  readonly table: TableDraft;
  readonly family: Family;
  index: number;
  module: string;
}

/** Parses the words of one rule from `start` (after `-A CHAIN`). */
export function parseRuleWords(
  words: readonly string[],
  start: number,
  table: TableDraft,
  family: Family,
): RuleBody | { message: string } {
  const cursor: RuleCursor = { words, table, family, index: start, module: '', matches: [], actions: [] };
  let negated = false;
  while (cursor.index < words.length) {
    const word = words[cursor.index++] as string;
    if (word === '!') {
      negated = true;
      continue;
    }
    const problem = readOption(aliasOf(word), negated, cursor);
    if (problem !== undefined) return { message: problem };
    negated = false;
  }
  if (negated) return { message: 'dangling "!"' };
  if (cursor.actions.length === 0) cursor.actions.push({ kind: 'continue', what: 'no target' });
  // Exact-length copies: arrays grown by push keep spare capacity, and a large ruleset keeps
  // every rule's arrays alive (most of the parse time was the garbage collector copying them).
  return { matches: cursor.matches.slice(), actions: cursor.actions.slice() };
}

/** Reads one option and its values at the cursor; answers a message when iptables would refuse it. */
function readOption(option: string, negated: boolean, cursor: RuleCursor): string | undefined {
  switch (option) {
    case '-p':
    case '-s':
    case '-d':
    case '-i':
    case '-o': {
      const value = cursor.words[cursor.index++];
      if (value === undefined) return `${option} without ${MISSING_VALUE[option]}`;
      cursor.matches.push(ruleLevelMatch(option, value, negated, cursor.family));
      return undefined;
    }
    case '-m':
      return readModule(cursor);
    case '-c':
      cursor.index += 2;
      return undefined;
    case '-j':
    case '-g':
      return readTarget(option, cursor);
    default: {
      const read = parseModuleOption(cursor.module, option, cursor.words, cursor.index, negated);
      cursor.index = read.next;
      cursor.matches.push(read.match);
      return undefined;
    }
  }
}

const MISSING_VALUE = {
  '-p': 'a protocol',
  '-s': 'an address',
  '-d': 'an address',
  '-i': 'an interface',
  '-o': 'an interface',
} as const;

function ruleLevelMatch(
  option: '-p' | '-s' | '-d' | '-i' | '-o',
  value: string,
  negated: boolean,
  family: Family,
): Match {
  if (option === '-p') return protocolMatch(value, negated);
  if (option === '-s' || option === '-d')
    return addressMatch(option === '-s' ? 'saddr' : 'daddr', value, family, negated);
  return { kind: 'interface', field: option === '-i' ? 'iif' : 'oif', names: [value], negated };
}

function readModule(cursor: RuleCursor): string | undefined {
  const module = cursor.words[cursor.index++];
  if (module === undefined) return '-m without a module';
  cursor.module = module;
  if (isKnownModule(module)) return undefined;
  // Consume the module's options so they are named in the unknown match, not misread.
  const from = cursor.index;
  while (
    cursor.index < cursor.words.length &&
    !isRuleLevelOption(cursor.words[cursor.index] as string, cursor.words[cursor.index + 1])
  )
    cursor.index++;
  cursor.matches.push({
    kind: 'unknown',
    text: `-m ${module} ${cursor.words.slice(from, cursor.index).join(' ')}`.trim(),
  });
  return undefined;
}

/** `-j TARGET [options]` or `-g CHAIN`: the target takes every word left. */
function readTarget(option: '-j' | '-g', cursor: RuleCursor): string | undefined {
  const target = cursor.words[cursor.index++];
  if (target === undefined) return `${option} without a target`;
  const restStart = cursor.index;
  cursor.index = cursor.words.length;
  if (option === '-j') cursor.actions.push(parseTarget(target, cursor.words, restStart, cursor.table, cursor.family));
  else
    cursor.actions.push(
      cursor.table.chains.has(target) ? { kind: 'goto', chain: target } : { kind: 'unknown', text: `-g ${target}` },
    );
  return undefined;
}
