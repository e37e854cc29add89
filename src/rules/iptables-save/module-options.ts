import { decimal } from '../../addr/decimal.js';
import { parsePortSet } from '../../addr/port-set.js';
import type { CtState, IdRange, Match } from '../model.js';

const KNOWN_MODULES = new Set([
  'tcp',
  'udp',
  'multiport',
  'owner',
  'comment',
  'mark',
  'connmark',
  'conntrack',
  'state',
]);

/** The `-m` modules whose options this reader models; any other becomes one unknown match. */
export function isKnownModule(module: string): boolean {
  return KNOWN_MODULES.has(module);
}

type ModuleOption = 'ports' | 'owner' | 'comment' | 'mark' | 'ctstate' | undefined;

/** Which of the modelled `-m MODULE --option` pairs this is; undefined for any other. */
function moduleOptionKind(module: string, option: string): ModuleOption {
  switch (module) {
    case 'tcp':
    case 'udp':
      return option === '--dport' || option === '--sport' ? 'ports' : undefined;
    case 'multiport':
      return option === '--dports' || option === '--sports' ? 'ports' : undefined;
    case 'owner':
      return option === '--uid-owner' || option === '--gid-owner' ? 'owner' : undefined;
    case 'comment':
      return option === '--comment' ? 'comment' : undefined;
    case 'mark':
    case 'connmark':
      return option === '--mark' ? 'mark' : undefined;
    case 'conntrack':
      return option === '--ctstate' ? 'ctstate' : undefined;
    case 'state':
      return option === '--state' ? 'ctstate' : undefined;
    default:
      return undefined;
  }
}

interface OptionRead {
  readonly match: Match;
  /** Index of the first word after the option's values. */
  readonly next: number;
}

function unknownOption(
  module: string,
  option: string,
  words: readonly string[],
  index: number,
  negated: boolean,
  consumed: number,
): OptionRead {
  const values = consumed > 0 ? ` ${words.slice(index, index + consumed).join(' ')}` : '';
  return {
    match: { kind: 'unknown', text: `${module ? `-m ${module} ` : ''}${negated ? '! ' : ''}${option}${values}` },
    next: index + consumed,
  };
}

/** The values an unmodelled option takes: words up to the next option or `!`. */
function valueCount(words: readonly string[], index: number): number {
  let count = 0;
  while (
    index + count < words.length &&
    !(words[index + count] as string).startsWith('-') &&
    words[index + count] !== '!'
  )
    count++;
  return count;
}

/** `--option VALUE` of the module in force; an option or value it cannot model is an unknown match. */
export function parseModuleOption(
  module: string,
  option: string,
  words: readonly string[],
  index: number,
  negated: boolean,
): OptionRead {
  const value = words[index];
  const kind = moduleOptionKind(module, option);
  if (value === undefined || kind === undefined)
    return unknownOption(module, option, words, index, negated, value === undefined ? 0 : valueCount(words, index));
  const match = modelledMatch(kind, module, option, value, negated);
  return match ? { match, next: index + 1 } : unknownOption(module, option, words, index, negated, 1);
}

function modelledMatch(
  kind: Exclude<ModuleOption, undefined>,
  module: string,
  option: string,
  value: string,
  negated: boolean,
): Match | undefined {
  switch (kind) {
    case 'ports': {
      const ports = parsePortSet(value);
      if (!ports.ok || ports.value.kind === 'all') return undefined;
      return { kind: 'port', field: option.startsWith('--d') ? 'dport' : 'sport', ports: ports.value, negated };
    }
    case 'owner': {
      const ids = parseIdRange(value);
      return ids ? { kind: 'owner', field: option === '--uid-owner' ? 'uid' : 'gid', ids: [ids], negated } : undefined;
    }
    case 'comment':
      return { kind: 'comment', text: value };
    case 'mark': {
      const mark = parseMarkValue(value);
      return mark ? { kind: 'mark', field: module === 'mark' ? 'mark' : 'ctmark', ...mark, negated } : undefined;
    }
    case 'ctstate': {
      const states = parseCtStates(value);
      return states ? { kind: 'ctstate', states, negated } : undefined;
    }
  }
}

function parseIdRange(text: string): IdRange | undefined {
  const single = decimal(text, 10);
  if (single !== undefined) return single <= 0xffffffff ? { from: single, to: single } : undefined;
  const match = /^(\d{1,10})(?:-(\d{1,10}))?$/.exec(text);
  if (!match) return undefined;
  const from = Number(match[1]);
  const to = match[2] === undefined ? from : Number(match[2]);
  return from <= to && to <= 0xffffffff ? { from, to } : undefined;
}

/** `VALUE[/MASK]`, decimal or hex, as `--mark` and `--set-xmark` print it. */
export function parseMarkValue(text: string): { value: number; mask: number } | undefined {
  const [valueText = '', maskText, extra] = text.split('/');
  if (extra !== undefined) return undefined;
  const value = parseUint32(valueText);
  const mask = maskText === undefined ? 0xffffffff : parseUint32(maskText);
  if (value === undefined || mask === undefined) return undefined;
  return { value, mask };
}

function parseUint32(text: string): number | undefined {
  if (!/^(0x[0-9a-fA-F]{1,8}|\d{1,10})$/.test(text)) return undefined;
  const value = Number(text);
  return value <= 0xffffffff ? value : undefined;
}

const CT_STATES: readonly string[] = ['new', 'established', 'related', 'invalid', 'untracked'];

function parseCtStates(text: string): CtState[] | undefined {
  const states: CtState[] = [];
  for (const item of text.toLowerCase().split(',')) {
    if (!CT_STATES.includes(item)) return undefined;
    states.push(item as CtState);
  }
  return states;
}
