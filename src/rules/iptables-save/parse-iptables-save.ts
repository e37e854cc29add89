import { parseCidr, type Cidr } from '../../addr/cidr.js';
import { parseIp, type Family, type IpAddress } from '../../addr/ip.js';
import { decimal } from '../../addr/decimal.js';
import { parsePortSet } from '../../addr/port-set.js';
import {
  parseError,
  type Action,
  type Backend,
  type Chain,
  type CtState,
  type IdRange,
  type Match,
  type ParseResult,
  type Rule,
  type Table,
} from '../model.js';
import { builtinChain, isIptablesTable } from './builtin-chains.js';
import { tokenizeLine } from './tokenize.js';

interface ParseOptions {
  readonly backend: Exclude<Backend, 'nftables'>;
  readonly family: Family;
  /** Names the dump in errors (a file name or the command that printed it). */
  readonly source: string;
}

interface ChainDraft {
  name: string;
  policy: 'accept' | 'drop' | undefined;
  rules: Rule[];
}

interface TableDraft {
  name: string;
  chains: Map<string, ChainDraft>;
}

const MAX_LINE = 64 * 1024;

/**
 * Reads `iptables-save` / `ip6tables-save` output (both backends print the same syntax). Structure
 * that iptables-restore would refuse (a rule outside a table, an undeclared chain, a missing COMMIT)
 * is a parse error naming the line; a match or target this reader does not model becomes an
 * `unknown` element of the rule, so the tracer can name it instead of guessing.
 */
export function parseIptablesSave(text: string, options: ParseOptions): ParseResult {
  const tables: Table[] = [];
  const seen = new Set<string>();
  let table: TableDraft | undefined;
  let tableLine = 0;
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const lineNumber = index + 1;
    // trim() also drops the \r of CRLF dumps.
    const line = (lines[index] as string).trim();
    if (line === '') continue;
    const first = line.charCodeAt(0);
    if (first === HASH) continue;
    const source = options.source;
    if (line.length > MAX_LINE) return fail(source, lineNumber, 'line is too long to be an iptables-save rule');
    if (first === STAR) {
      if (table) return fail(source, lineNumber, `table "${line.slice(1)}" starts before table "${table.name}" was committed`);
      const name = line.slice(1);
      if (!/^[a-z_]{1,32}$/.test(name)) return fail(source, lineNumber, `"${line}" does not name a table`);
      if (seen.has(name)) return fail(source, lineNumber, `table "${name}" appears twice`);
      seen.add(name);
      table = { name, chains: new Map() };
      tableLine = lineNumber;
      continue;
    }
    if (!table) return fail(source, lineNumber, `"${truncate(line)}" appears outside a table (expected *table first)`);
    if (line === 'COMMIT') {
      tables.push(finishTable(table, options));
      table = undefined;
      continue;
    }
    if (first === COLON) {
      const match = /^:(\S{1,64})\s+(\S+)(?:\s+\[\d+:\d+\])?$/.exec(line);
      if (!match) return fail(source, lineNumber, `"${truncate(line)}" is not a chain declaration`);
      const name = match[1] as string;
      const policyText = match[2] as string;
      const builtin = builtinChain(table.name, name);
      let policy: ChainDraft['policy'];
      if (policyText === 'ACCEPT') policy = 'accept';
      else if (policyText === 'DROP') policy = 'drop';
      else if (policyText !== '-') return fail(source, lineNumber, `chain ${name} has policy "${policyText}"`);
      if (builtin && policy === undefined) return fail(source, lineNumber, `built-in chain ${name} has no policy`);
      if (!builtin && policy !== undefined) return fail(source, lineNumber, `user chain ${name} cannot have a policy`);
      if (table.chains.has(name)) return fail(source, lineNumber, `chain ${name} is declared twice`);
      table.chains.set(name, { name, policy, rules: [] });
      continue;
    }
    const rule = parseRuleLine(line, lineNumber, table, options);
    if ('message' in rule) return fail(source, lineNumber, rule.message);
    rule.chain.rules.push(rule.rule);
  }
  if (table) {
    return { ok: false, error: parseError(options.source, tableLine, `table "${table.name}" has no COMMIT (truncated dump?)`) };
  }
  return { ok: true, tables };
}

const HASH = 0x23;
const STAR = 0x2a;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const DASH = 0x2d;

function fail(source: string, line: number, message: string): ParseResult {
  return { ok: false, error: parseError(source, line, message) };
}

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

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

type RuleLine = { chain: ChainDraft; rule: Rule } | { message: string };

function parseRuleLine(line: string, lineNumber: number, table: TableDraft, options: ParseOptions): RuleLine {
  const words = tokenizeLine(line);
  if (!words) return { message: 'unterminated quote' };
  // `iptables-save -c` prints counters as a `[packets:bytes]` prefix.
  let start = 0;
  const head = words[0];
  if (head !== undefined && head.charCodeAt(0) === OPEN_BRACKET && /^\[\d+:\d+\]$/.test(head)) start = 1;
  if (words[start] === '-I') return { message: 'iptables-save never prints -I; expected -A' };
  if (words[start] !== '-A') return { message: `"${truncate(line)}" is neither a rule (-A) nor a chain, table or COMMIT line` };
  const chainName = words[start + 1];
  if (chainName === undefined) return { message: '-A without a chain name' };
  const chain = table.chains.get(chainName);
  if (!chain) return { message: `rule for chain ${chainName}, which table ${table.name} does not declare` };
  const text = line.charCodeAt(0) === OPEN_BRACKET ? line.replace(/^\[\d+:\d+\]\s*/, '') : line;
  const body = parseRuleWords(words, start + 2, table, options.family);
  if ('message' in body) return body;
  return {
    chain,
    rule: {
      matches: body.matches,
      actions: body.actions,
      provenance: {
        backend: options.backend,
        family: options.family,
        table: table.name,
        // The declared name (the same text) is shared by every rule of the chain.
        chain: chain.name,
        position: chain.rules.length + 1,
        text,
        line: lineNumber,
      },
    },
  };
}

const OPTION_ALIASES: ReadonlyMap<string, string> = new Map(Object.entries({
  '--protocol': '-p',
  '--source': '-s',
  '--src': '-s',
  '--destination': '-d',
  '--dst': '-d',
  '--in-interface': '-i',
  '--out-interface': '-o',
  '--match': '-m',
  '--jump': '-j',
  '--goto': '-g',
  '--destination-port': '--dport',
  '--source-port': '--sport',
  '--destination-ports': '--dports',
  '--source-ports': '--sports',
}));

/** Parses the words of one rule from `start` (after `-A CHAIN`). */
function parseRuleWords(
  words: readonly string[],
  start: number,
  table: TableDraft,
  family: Family,
): { matches: Match[]; actions: Action[] } | { message: string } {
  const matches: Match[] = [];
  const actions: Action[] = [];
  let negate = false;
  let module = '';
  let index = start;
  while (index < words.length) {
    const word = words[index] as string;
    index++;
    if (word === '!') {
      negate = true;
      continue;
    }
    const option = aliasOf(word);
    const negated = negate;
    negate = false;
    switch (option) {
      case '-p': {
        const value = words[index++];
        if (value === undefined) return { message: '-p without a protocol' };
        matches.push(protocolMatch(value, negated));
        break;
      }
      case '-s':
      case '-d': {
        const value = words[index++];
        if (value === undefined) return { message: `${option} without an address` };
        matches.push(addressMatch(option === '-s' ? 'saddr' : 'daddr', value, family, negated));
        break;
      }
      case '-i':
      case '-o': {
        const value = words[index++];
        if (value === undefined) return { message: `${option} without an interface` };
        matches.push({ kind: 'interface', field: option === '-i' ? 'iif' : 'oif', names: [value], negated });
        break;
      }
      case '-m': {
        const value = words[index++];
        if (value === undefined) return { message: '-m without a module' };
        module = value;
        if (!isKnownModule(module)) {
          // Consume the module's options so they are named in the unknown match, not misread.
          const from = index;
          while (index < words.length && !isRuleLevelOption(words[index] as string, words[index + 1])) index++;
          matches.push({ kind: 'unknown', text: `-m ${module} ${words.slice(from, index).join(' ')}`.trim() });
        }
        break;
      }
      case '-c': {
        index += 2;
        break;
      }
      case '-j':
      case '-g': {
        const target = words[index++];
        if (target === undefined) return { message: `${option} without a target` };
        const restStart = index;
        index = words.length;
        if (option === '-g') {
          actions.push(table.chains.has(target) ? { kind: 'goto', chain: target } : { kind: 'unknown', text: `-g ${target}` });
        } else {
          actions.push(parseTarget(target, words, restStart, table, family));
        }
        break;
      }
      default: {
        const consumed = parseModuleOption(module, option, words, index, negated);
        index = consumed.next;
        matches.push(consumed.match);
      }
    }
  }
  if (negate) return { message: 'dangling "!"' };
  if (actions.length === 0) actions.push({ kind: 'continue', what: 'no target' });
  // Exact-length copies: arrays grown by push keep spare capacity, and a large ruleset keeps
  // every rule's arrays alive (most of the parse time was the garbage collector copying them).
  return { matches: matches.slice(), actions: actions.slice() };
}

function isKnownModule(module: string): boolean {
  switch (module) {
    case 'tcp':
    case 'udp':
    case 'multiport':
    case 'owner':
    case 'comment':
    case 'mark':
    case 'connmark':
    case 'conntrack':
    case 'state':
      return true;
    default:
      return false;
  }
}

/** The short form of a long option; every alias starts with `--`, so other words skip the lookup. */
function aliasOf(word: string): string {
  return word.charCodeAt(0) === DASH && word.charCodeAt(1) === DASH ? (OPTION_ALIASES.get(word) ?? word) : word;
}

const RULE_LEVEL_OPTIONS = new Set(['-p', '-s', '-d', '-i', '-o', '-m', '-j', '-g', '-c']);

function isRuleLevelOption(word: string, next: string | undefined): boolean {
  if (word === '!' && next !== undefined) return isRuleLevelOption(next, undefined);
  return RULE_LEVEL_OPTIONS.has(aliasOf(word));
}

const PROTOCOL_NUMBERS: ReadonlyMap<string, string> = new Map([['6', 'tcp'], ['17', 'udp'], ['1', 'icmp'], ['58', 'ipv6-icmp'], ['132', 'sctp']]);

function protocolMatch(value: string, negated: boolean): Match {
  const name = PROTOCOL_NUMBERS.get(value) ?? value.toLowerCase();
  if (name === 'all' || name === '0') return negated ? { kind: 'unknown', text: `! -p ${value}` } : { kind: 'protocol', protocols: ['tcp', 'udp', 'icmp', 'ipv6-icmp', 'sctp'], negated: false };
  return { kind: 'protocol', protocols: [name], negated };
}

function addressMatch(field: 'saddr' | 'daddr', value: string, family: Family, negated: boolean): Match {
  const unknown = (): Match => ({ kind: 'unknown', text: `${negated ? '! ' : ''}${field === 'saddr' ? '-s' : '-d'} ${value}` });
  if (!value.includes(',')) {
    const cidr = parseMaskedCidr(value);
    if (!cidr || cidr.family !== family) return unknown();
    return { kind: 'address', field, family, cidrs: [cidr], negated };
  }
  const cidrs: Cidr[] = [];
  for (const item of value.split(',')) {
    const cidr = parseMaskedCidr(item);
    if (!cidr || cidr.family !== family) return unknown();
    cidrs.push(cidr);
  }
  return { kind: 'address', field, family, cidrs, negated };
}

/** iptables prints `/32`-style prefixes, but accepts and may print dotted netmasks too. */
function parseMaskedCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash > 0 && text.indexOf('.', slash + 1) >= 0) {
    const mask = parseIp(text.slice(slash + 1));
    if (!mask || mask.family !== 'ipv4') return undefined;
    const bits = mask.value.toString(2).padStart(32, '0');
    if (!/^1*0*$/.test(bits)) return undefined;
    return parseCidr(`${text.slice(0, slash)}/${bits.indexOf('0') < 0 ? 32 : bits.indexOf('0')}`);
  }
  return parseCidr(text);
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

function unknownOption(module: string, option: string, words: readonly string[], index: number, negated: boolean, consumed: number): { match: Match; next: number } {
  const values = consumed > 0 ? ` ${words.slice(index, index + consumed).join(' ')}` : '';
  return { match: { kind: 'unknown', text: `${module ? `-m ${module} ` : ''}${negated ? '! ' : ''}${option}${values}` }, next: index + consumed };
}

/** The values an unmodelled option takes: words up to the next option or `!`. */
function valueCount(words: readonly string[], index: number): number {
  let count = 0;
  while (index + count < words.length && !(words[index + count] as string).startsWith('-') && words[index + count] !== '!') count++;
  return count;
}

function parseModuleOption(
  module: string,
  option: string,
  words: readonly string[],
  index: number,
  negated: boolean,
): { match: Match; next: number } {
  const value = words[index];
  if (value === undefined) return unknownOption(module, option, words, index, negated, 0);
  switch (moduleOptionKind(module, option)) {
    case 'ports': {
      const ports = parsePortSet(value);
      if (!ports.ok || ports.value.kind === 'all') return unknownOption(module, option, words, index, negated, 1);
      const field = option.startsWith('--d') ? 'dport' : 'sport';
      return { match: { kind: 'port', field, ports: ports.value, negated }, next: index + 1 };
    }
    case 'owner': {
      const ids = parseIdRange(value);
      if (!ids) return unknownOption(module, option, words, index, negated, 1);
      return { match: { kind: 'owner', field: option === '--uid-owner' ? 'uid' : 'gid', ids: [ids], negated }, next: index + 1 };
    }
    case 'comment':
      return { match: { kind: 'comment', text: value }, next: index + 1 };
    case 'mark': {
      const mark = parseMarkValue(value);
      if (!mark) return unknownOption(module, option, words, index, negated, 1);
      return { match: { kind: 'mark', field: module === 'mark' ? 'mark' : 'ctmark', ...mark, negated }, next: index + 1 };
    }
    case 'ctstate': {
      const states = parseCtStates(value);
      if (!states) return unknownOption(module, option, words, index, negated, 1);
      return { match: { kind: 'ctstate', states, negated }, next: index + 1 };
    }
    default:
      return unknownOption(module, option, words, index, negated, valueCount(words, index));
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

export function parseMarkValue(text: string): { value: number; mask: number } | undefined {
  const [valueText = '', maskText] = text.split('/');
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

function parseCtStates(text: string): CtState[] | undefined {
  const states: CtState[] = [];
  for (const item of text.toLowerCase().split(',')) {
    if (!['new', 'established', 'related', 'invalid', 'untracked'].includes(item)) return undefined;
    states.push(item as CtState);
  }
  return states;
}

function parseTarget(target: string, words: readonly string[], start: number, table: TableDraft, family: Family): Action {
  if (start === words.length) {
    // No target options (the common case): decided without building the option maps.
    if (target === 'ACCEPT') return { kind: 'accept' };
    if (target === 'DROP') return { kind: 'drop' };
    if (target === 'RETURN') return { kind: 'return' };
  }
  const rest = words.slice(start);
  const options = new Map<string, string>();
  const flags = new Set<string>();
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index] as string;
    const next = rest[index + 1];
    if (next !== undefined && !next.startsWith('--')) {
      options.set(word, next);
      index++;
    } else {
      flags.add(word);
    }
  }
  const only = (...allowed: string[]): boolean =>
    [...options.keys(), ...flags].every((key) => allowed.includes(key));
  switch (target) {
    case 'ACCEPT':
      return rest.length === 0 ? { kind: 'accept' } : unknownTarget(target, rest);
    case 'DROP':
      return rest.length === 0 ? { kind: 'drop' } : unknownTarget(target, rest);
    case 'REJECT':
      return { kind: 'drop' };
    case 'RETURN':
      return rest.length === 0 ? { kind: 'return' } : unknownTarget(target, rest);
    case 'REDIRECT': {
      if (!only('--to-ports', '--random')) return unknownTarget(target, rest);
      const ports = options.get('--to-ports');
      if (ports === undefined) return { kind: 'redirect', port: undefined };
      const port = parseSinglePort(ports);
      return port === undefined ? unknownTarget(target, rest) : { kind: 'redirect', port };
    }
    case 'DNAT': {
      if (!only('--to-destination', '--random', '--persistent')) return unknownTarget(target, rest);
      const destination = options.get('--to-destination');
      const parsed = destination === undefined ? undefined : parseNatDestination(destination, family);
      return parsed ?? unknownTarget(target, rest);
    }
    case 'TPROXY': {
      if (!only('--on-port', '--on-ip', '--tproxy-mark')) return unknownTarget(target, rest);
      const port = parseSinglePort(options.get('--on-port') ?? '');
      return port === undefined ? unknownTarget(target, rest) : { kind: 'tproxy', port, terminal: true };
    }
    case 'MARK': {
      const xmark = options.get('--set-xmark') ?? options.get('--set-mark');
      if (options.size !== 1 || flags.size !== 0 || xmark === undefined) return unknownTarget(target, rest);
      const mark = parseMarkValue(xmark);
      return mark ? { kind: 'set-mark', ...mark } : unknownTarget(target, rest);
    }
    case 'CONNMARK': {
      const fullMasks = ['--nfmask', '--ctmask', '--mask'].every((key) => !options.has(key) || options.get(key) === '0xffffffff');
      if (!fullMasks) return unknownTarget(target, rest);
      if (flags.has('--save-mark') && flags.size === 1) return { kind: 'save-mark' };
      if (flags.has('--restore-mark') && flags.size === 1) return { kind: 'restore-mark' };
      return unknownTarget(target, rest);
    }
    case 'CT':
    case 'LOG':
    case 'NFLOG':
    case 'TRACE':
      return { kind: 'continue', what: target };
    default:
      if (rest.length === 0 && table.chains.has(target) && !builtinChain(table.name, target)) return { kind: 'jump', chain: target };
      void isIptablesTable;
      return unknownTarget(target, rest);
  }
}

function unknownTarget(target: string, rest: readonly string[]): Action {
  return { kind: 'unknown', text: `-j ${[target, ...rest].join(' ')}` };
}

function parseSinglePort(text: string): number | undefined {
  const match = /^(\d{1,5})(?:[-:](\d{1,5}))?$/.exec(text);
  if (!match) return undefined;
  const from = Number(match[1]);
  const to = match[2] === undefined ? from : Number(match[2]);
  // A range spreads connections over ports; one port is all the meshes write and all we can check.
  return from === to && from >= 1 && from <= 65535 ? from : undefined;
}

function parseNatDestination(text: string, family: Family): Action | undefined {
  let addressText = text;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(.+))?$/.exec(text);
  if (bracket) {
    addressText = bracket[1] as string;
    portText = bracket[2];
  } else if (family === 'ipv4' && text.includes(':')) {
    [addressText = '', portText] = text.split(':');
  } else if (text.startsWith(':')) {
    addressText = '';
    portText = text.slice(1);
  }
  let address: IpAddress | undefined;
  if (addressText !== '') {
    address = parseIp(addressText);
    if (!address || address.family !== family) return undefined;
  }
  let port: number | undefined;
  if (portText !== undefined) {
    port = parseSinglePort(portText);
    if (port === undefined) return undefined;
  }
  return { kind: 'dnat', address, port };
}
